// The service's own state: GET /healthz (for load balancers: 503 while the store
// fails or a stop is under way), GET /metrics (Prometheus text) and GET /openapi.json.
//
// Threading: the service's event-loop thread.
#pragma once

#include "service/api_answer.h"
#include "service/api_context.h"

namespace trtwatch::service {

[[nodiscard]] ApiAnswer HealthAnswer(ApiContext& api, const ApiRequest& req);
[[nodiscard]] ApiAnswer MetricsAnswer(ApiContext& api, const ApiRequest& req);
[[nodiscard]] ApiAnswer OpenApiAnswer(ApiContext& api, const ApiRequest& req);

}  // namespace trtwatch::service
