// The build history: GET /history (finished builds, newest first), GET
// /history/report (their times summed up by model) and GET /builds/{id}/compare (two
// builds side by side, or one against its previous build). docs/api.md has the fields.
//
// Threading: the service's event-loop thread.
#pragma once

#include "service/api_answer.h"
#include "service/api_context.h"

namespace trtwatch::service {

[[nodiscard]] ApiAnswer HistoryListAnswer(ApiContext& api, const ApiRequest& req);
[[nodiscard]] ApiAnswer HistoryReportAnswer(ApiContext& api, const ApiRequest& req);
[[nodiscard]] ApiAnswer CompareAnswer(ApiContext& api, const ApiRequest& req);

}  // namespace trtwatch::service
