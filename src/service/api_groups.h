// Build groups (one model built for several GPU types): GET /groups/{gid}, POST
// /groups/{gid}/cancel and GET /groups/{gid}/manifest. A group is created by POST
// /builds (api_builds.h); a member's engine is downloaded as a build's (api_models.h).
//
// Threading: the service's event-loop thread.
#pragma once

#include "service/api_answer.h"
#include "service/api_context.h"

namespace trtwatch::service {

[[nodiscard]] ApiAnswer GroupAnswer(ApiContext& api, const ApiRequest& req);

}  // namespace trtwatch::service
