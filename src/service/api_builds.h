// Builds: POST /builds (a build, or a group when the request asks for one), GET
// /builds (a page of records, or a group's members), GET /builds/{id}, POST
// /builds/{id}/cancel and GET /builds/{id}/trace. The event streams of
// /builds/{id}/events and /builds/changes are api_events.h's; this file answers their
// other methods.
//
// Threading: the service's event-loop thread.
#pragma once

#include "service/api_answer.h"
#include "service/api_context.h"

namespace trtwatch::service {

// POST and GET /builds.
[[nodiscard]] ApiAnswer BuildsAnswer(ApiContext& api, const ApiRequest& req);
// /builds/{id}, /builds/{id}/cancel, /builds/{id}/trace; /builds/{id}/events but GET.
[[nodiscard]] ApiAnswer BuildAnswer(ApiContext& api, const ApiRequest& req);
// /builds/changes but GET.
[[nodiscard]] ApiAnswer BuildChangesAnswer(ApiContext& api, const ApiRequest& req);

}  // namespace trtwatch::service
