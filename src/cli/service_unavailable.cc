// `trtwatch serve` in a build without the service (TRTWATCH_BUILD_SERVICE=OFF, the
// default on Windows, where Boost.Beast and SQLite are not packaged for MinGW): the
// command is still there, and says so instead of vanishing from the help.
#include <cstdio>

#include <trtwatch/result.h>

#include "service/server.h"

namespace trtwatch::service {

int RunServer(const ServerOptions& /*options*/) {
  std::fprintf(stderr,
               "trtwatch serve: the build service is not part of this trtwatch (it was built with "
               "TRTWATCH_BUILD_SERVICE=OFF, as on Windows). Run the service on Linux, or use `trtwatch build` "
               "here; see docs/windows.md\n");
  return exit_code::kUsage;
}

}  // namespace trtwatch::service
