#include "service/api_status.h"

#include <nlohmann/json.hpp>

#include "builds/build_manager.h"
#include "builds/metrics.h"
#include "service/assets.h"

namespace trtwatch::service {

using nlohmann::json;

ApiAnswer HealthAnswer(ApiContext& api, const ApiRequest& req) {
  if (req.method != Method::kGet) return MethodNotAllowed("GET");
  builds::BuildManager& manager = api.manager;
  if (!manager.RetryUnsaved()) {
    ApiAnswer answer = JsonAnswer(503, json{{"status", "unhealthy"},
                                            {"store", manager.storage_error()},
                                            {"running", manager.running()},
                                            {"queued", manager.queued()}}
                                           .dump(-1, ' ', false, json::error_handler_t::replace));
    answer.Set("Retry-After", "5");
    return answer;
  }
  // Stopping: still answering (reads are served until the last build ends), but not
  // to be sent new work.
  ApiAnswer answer = JsonAnswer(api.stopping ? 503 : 200, json{{"status", api.stopping ? "stopping" : "ok"},
                                                               {"store", "ok"},
                                                               {"running", manager.running()},
                                                               {"queued", manager.queued()}}
                                                              .dump());
  if (api.stopping) answer.Set("Retry-After", "5");
  return answer;
}

ApiAnswer MetricsAnswer(ApiContext& api, const ApiRequest& req) {
  if (req.method != Method::kGet) return MethodNotAllowed("GET");
  ApiAnswer answer;
  answer.Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
  answer.body = api.metrics.Render(api.manager.running(), api.manager.queued());
  return answer;
}

ApiAnswer OpenApiAnswer(ApiContext&, const ApiRequest& req) {
  if (req.method != Method::kGet) return MethodNotAllowed("GET");
  return JsonAnswer(200, std::string(OpenApiDocument()));
}

}  // namespace trtwatch::service
