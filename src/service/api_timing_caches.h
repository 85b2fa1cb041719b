// The fleet's timing caches (builds/fleet_timing_caches.h): GET /timing-caches lists
// them, GET /timing-caches/{name} downloads one (a snapshot, with its digest), DELETE
// removes one (recorded in the audit trail as timing_cache.delete).
//
// Threading: the service's event-loop thread.
#pragma once

#include "service/api_answer.h"
#include "service/api_context.h"
#include "service/api_models.h"  // DownloadPlan, DownloadHeaders

namespace trtwatch::service {

// GET /timing-caches; DELETE /timing-caches/{name}; 405 for other methods (GET of one
// cache is a download: PlanTimingCacheDownload).
[[nodiscard]] ApiAnswer TimingCachesAnswer(ApiContext& api, const ApiRequest& req);

// GET /timing-caches/{name}: 404 for no such cache, 503 with Retry-After while a build
// merges into it.
[[nodiscard]] DownloadPlan PlanTimingCacheDownload(ApiContext& api, const Route& route, const DownloadHeaders& headers);

}  // namespace trtwatch::service
