// `trtwatch history|report|compare --service URL` in a build without the service
// (TRTWATCH_BUILD_SERVICE=OFF, as on Windows): no HTTP client is built, so they say so.
#include "app/service_reader.h"

namespace trtwatch::app {

ServiceAnswer GetFromService(const std::string& /*url*/, const std::string& /*target*/,
                             const std::string& /*token_file*/) {
  return {ServiceAnswer::Outcome::kBadOption, 0, "",
          "--service needs the build service's client, which is not part of this trtwatch (built with "
          "TRTWATCH_BUILD_SERVICE=OFF, as on Windows); use curl on GET /history, or the local history"};
}

}  // namespace trtwatch::app
