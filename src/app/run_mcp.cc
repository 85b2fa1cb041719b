#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "app/run_mcp.h"

#include <boost/asio/io_context.hpp>
#include <cstdio>

#include "app/builds_root.h"
#include "mcp/stdio_server.h"

namespace trtwatch::app {

int RunMcp(const builds::BuildsConfig& config, const McpToolsConfig& tools, const std::string& version) {
  boost::asio::io_context io(1);
  BuildsRoot::Opening opening = BuildsRoot::Open(io, config, tools);
  if (!opening.root) {
    std::fprintf(stderr, "trtwatch mcp: %s\n", opening.error.c_str());
    return 2;
  }
  std::fprintf(stderr, "trtwatch mcp: serving MCP on stdio (records in %s)\n",
               config.store.empty() ? config.data_dir.c_str() : "the --store database");
  BuildsRoot& root = *opening.root;
  const int code =
      mcp::RunStdioServer(io, root.tools(), root.manager(), mcp::ServerInfo{version, mcp::Instructions()});
  opening.root.reset();  // tools, manager and workers go before the event loop does
  return code;
}

}  // namespace trtwatch::app
