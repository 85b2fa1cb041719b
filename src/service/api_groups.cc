#include "service/api_groups.h"

#include <string>

#include "builds/build_group.h"
#include "service/api_outcomes.h"

namespace trtwatch::service {

ApiAnswer GroupAnswer(ApiContext& api, const ApiRequest& req) {
  const std::string gid(req.route.id);
  if (!builds::ValidGroupId(gid)) {
    return ErrorAnswer(404, "no group \"" + gid + "\"; group ids look like g_ and 32 hex digits");
  }
  if (req.route.endpoint == Endpoint::kGroupCancel) {
    if (req.method != Method::kPost) return MethodNotAllowed("POST");
    return ManagerAnswer(api.manager.groups().Cancel(gid, req.body));
  }
  if (req.method != Method::kGet) return MethodNotAllowed("GET");
  if (req.route.endpoint == Endpoint::kGroupManifest) return ManagerAnswer(api.manager.groups().Manifest(gid));
  return ManagerAnswer(api.manager.groups().Get(gid));
}

}  // namespace trtwatch::service
