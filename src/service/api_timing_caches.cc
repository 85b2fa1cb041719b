#include "service/api_timing_caches.h"

#include <nlohmann/json.hpp>

#include "builds/audit_log.h"
#include "builds/build_manager.h"
#include "builds/build_record.h"  // FormatTime

namespace trtwatch::service {

using nlohmann::json;
using Outcome = builds::FleetTimingCaches::Outcome;

namespace {

// {name, builder, gpu, size, entries, last_merged, builds_served, builds_contributed, url}
json TimingCacheJson(const TimingCacheFile& cache) {
  auto text = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  return {{"name", cache.name},
          {"builder", text(cache.builder)},
          {"gpu", text(cache.gpu)},
          {"size", cache.size},
          {"entries", cache.entries ? json(*cache.entries) : json(nullptr)},
          {"last_merged", cache.modified_unix > 0 ? json(builds::FormatTime(cache.modified_unix)) : json(nullptr)},
          {"builds_served", cache.served},
          {"builds_contributed", cache.contributed},
          {"url", "/timing-caches/" + cache.name}};
}

ApiAnswer ListTimingCachesAnswer(ApiContext& api) {
  const builds::FleetTimingCaches& caches = api.manager.timing_caches();
  json list = json::array();
  for (const TimingCacheFile& cache : caches.List()) list.push_back(TimingCacheJson(cache));
  return JsonAnswer(200, json{{"enabled", caches.enabled()}, {"timing_caches", list}}.dump());
}

// 503 with Retry-After (RFC 9110 §10.2.3): a merge holds the cache for well under a second.
ApiAnswer BusyAnswer(const std::string& error) {
  ApiAnswer answer = ErrorAnswer(503, error);
  answer.Set("Retry-After", "1");
  return answer;
}

ApiAnswer RemoveTimingCacheAnswer(ApiContext& api, const std::string& name, std::string_view caller) {
  const builds::FleetTimingCaches::Removal removal = api.manager.timing_caches().Remove(name);
  switch (removal.outcome) {
    case Outcome::kDone:
      (void)api.audit.Record(caller, builds::audit_action::kTimingCacheDelete, name);
      return ApiAnswer{204, {}, {}};
    case Outcome::kNotFound:
      return ErrorAnswer(404, removal.error);
    case Outcome::kBusy:
      return BusyAnswer(removal.error);
    case Outcome::kFailed:
      break;
  }
  return ErrorAnswer(500, removal.error);
}

}  // namespace

ApiAnswer TimingCachesAnswer(ApiContext& api, const ApiRequest& req) {
  if (req.route.endpoint == Endpoint::kTimingCaches) {
    if (req.method != Method::kGet) return MethodNotAllowed("GET");
    return ListTimingCachesAnswer(api);
  }
  if (req.method != Method::kDelete) return MethodNotAllowed("GET, HEAD, DELETE");
  return RemoveTimingCacheAnswer(api, std::string(req.route.id), req.caller);
}

DownloadPlan PlanTimingCacheDownload(ApiContext& api, const Route& route, const DownloadHeaders& headers) {
  const std::string name(route.id);
  const builds::FleetTimingCaches::Download found = api.manager.timing_caches().Snapshot(name);
  DownloadPlan plan;
  switch (found.outcome) {
    case Outcome::kDone:
      return PlanFileDownload({builds::ArtifactOutcome::kFound, found.path, found.file, ""}, name, headers);
    case Outcome::kNotFound:
      plan.answer = ErrorAnswer(404, found.error);
      return plan;
    case Outcome::kBusy:
      plan.answer = BusyAnswer(found.error);
      return plan;
    case Outcome::kFailed:
      break;
  }
  plan.answer = ErrorAnswer(500, found.error);
  return plan;
}

}  // namespace trtwatch::service
