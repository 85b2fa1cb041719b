#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "app/run_mcp.h"

#include <boost/asio/io_context.hpp>
#include <cstdio>

#include "app/builds_root.h"
#include "mcp/stdio_server.h"

namespace trtwatch::app {

int RunMcp(const McpOptions& options) {
  BuildsConfig config;
  config.data_dir = options.data_dir;
  config.artifact_dir = options.artifact_dir;
  config.model_roots = options.model_roots;
  config.max_concurrent = options.max_concurrent;
  config.queue_limit = options.queue_limit;
  config.tools.max_build_seconds = options.max_build_seconds;
  config.tools.doctor = options.doctor;
  boost::asio::io_context io(1);
  BuildsRoot::Opening opening = BuildsRoot::Open(io, config);
  if (!opening.root) {
    std::fprintf(stderr, "trtwatch mcp: %s\n", opening.error.c_str());
    return 2;
  }
  std::fprintf(stderr, "trtwatch mcp: serving MCP on stdio (records in %s)\n", options.data_dir.c_str());
  BuildsRoot& root = *opening.root;
  const int code =
      mcp::RunStdioServer(io, root.tools(), root.manager(), mcp::ServerInfo{options.version, mcp::Instructions()});
  opening.root.reset();  // tools, manager and workers go before the event loop does
  return code;
}

}  // namespace trtwatch::app
