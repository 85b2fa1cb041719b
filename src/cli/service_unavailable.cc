// `trtwatch serve` and `trtwatch mcp` in a build without the service
// (TRTWATCH_BUILD_SERVICE=OFF, the default on Windows, where Boost.Beast and SQLite are
// not packaged for MinGW): the commands are still there, and say so instead of
// vanishing from the help.
#include <cstdio>

#include <trtwatch/result.h>

#include "app/run_mcp.h"
#include "app/run_serve.h"
#include "app/user_admin.h"

namespace trtwatch::app {

int RunServe(const service::ServerOptions& /*options*/) {
  std::fprintf(stderr,
               "trtwatch serve: the build service is not part of this trtwatch (it was built with "
               "TRTWATCH_BUILD_SERVICE=OFF, as on Windows). Run the service on Linux, or use `trtwatch build` "
               "here; see docs/windows.md\n");
  return exit_code::kUsage;
}

int RunMcp(const builds::BuildsConfig& /*config*/, const McpToolsConfig& /*tools*/, const std::string& /*version*/) {
  std::fprintf(stderr,
               "trtwatch mcp: the MCP server runs builds through the build service, which is not part of this "
               "trtwatch (built with TRTWATCH_BUILD_SERVICE=OFF, as on Windows). Run it on Linux; see "
               "docs/windows.md\n");
  return exit_code::kUsage;
}

namespace {
Status NoUsers() {
  return Status::Error("the users of the build service are not part of this trtwatch (built with "
                       "TRTWATCH_BUILD_SERVICE=OFF, as on Windows); manage them where the service runs");
}
}  // namespace

Result<std::string> AddUser(const std::string&, const std::string&, const std::string&) { return NoUsers(); }
Result<std::vector<ListedUser>> ListUsers(const std::string&) { return NoUsers(); }
Status RemoveUser(const std::string&, const std::string&) { return NoUsers(); }

}  // namespace trtwatch::app
