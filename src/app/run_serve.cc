#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "app/run_serve.h"

#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/builds_root.h"
#include "app/mcp_over_http.h"

namespace trtwatch::app {

namespace {

int Usage(const std::string& message) {
  std::fprintf(stderr, "trtwatch serve: %s\n", message.c_str());
  return 2;
}

McpToolsConfig ToolsConfigOf(const service::ServerOptions& options) {
  McpToolsConfig tools{options.mcp_max_build_seconds, nullptr};
  if (options.doctor_json) tools.doctor = [f = options.doctor_json] { return nlohmann::json::parse(f()); };
  return tools;
}

}  // namespace

int RunServe(const service::ServerOptions& options) {
  service::CheckedServerOptions checked = service::CheckServerOptions(options);
  if (!checked.error.empty()) return Usage(checked.error);
  boost::asio::io_context io(1);  // the manager's thread: builds, store, HTTP requests
  BuildsRoot::Opening opening = BuildsRoot::Open(io, options.builds, ToolsConfigOf(options));
  if (!opening.root) return Usage(opening.error);
  BuildsRoot& root = *opening.root;
  McpOverHttp mcp(root.tools(), mcp::ServerInfo{options.version, mcp::Instructions()});
  const int code = service::RunServer(options, std::move(*checked.users),
                                      {io, root.store(), root.metrics(), root.manager(), root.artifacts(),
                                       root.audit(), mcp});
  opening.root.reset();  // tools, manager and workers go before the event loop does
  if (code == 0) std::fprintf(stderr, "trtwatch serve: stopped\n");
  return code;
}

}  // namespace trtwatch::app
