#include "service/api_history.h"

#include <string>

#include "builds/build_manager.h"
#include "builds/history_queries.h"
#include "history/history_file.h"
#include "service/http_request.h"

namespace trtwatch::service {

namespace {

ApiAnswer HistoryResponse(builds::HistoryAnswer answer) {
  switch (answer.outcome) {
    case builds::HistoryAnswer::Outcome::kOk:
      return JsonAnswer(200, std::move(answer.body));
    case builds::HistoryAnswer::Outcome::kNotInHistory:
      return ErrorAnswer(409, answer.error);
    case builds::HistoryAnswer::Outcome::kStorageError:
      break;
  }
  ApiAnswer res = ErrorAnswer(503, answer.error);
  res.Set("Retry-After", "1");
  return res;
}

// GET /history, GET /history/report (docs/api.md).
ApiAnswer History(ApiContext& api, const ApiRequest& req, HistoryRoute route) {
  if (req.method != Method::kGet) return MethodNotAllowed("GET");
  HistoryFilter filter;
  std::string error;
  if (!ParseHistoryQuery(req.target, route, &filter, &error)) return ErrorAnswer(400, error);
  builds::HistoryQuery query;
  query.model = filter.model;
  query.key = filter.key;
  query.limit = static_cast<int>(filter.limit);
  if (filter.since_seconds > 0) {
    query.finished_after = history::UnixNow() - static_cast<int64_t>(filter.since_seconds);
  }
  return HistoryResponse(route == HistoryRoute::kList ? builds::ListHistory(api.store, query)
                                                      : builds::ReportHistory(api.store, query));
}

}  // namespace

ApiAnswer HistoryListAnswer(ApiContext& api, const ApiRequest& req) { return History(api, req, HistoryRoute::kList); }

ApiAnswer HistoryReportAnswer(ApiContext& api, const ApiRequest& req) {
  return History(api, req, HistoryRoute::kReport);
}

// GET /builds/{id}/compare[?with=OTHER] (docs/api.md).
ApiAnswer CompareAnswer(ApiContext& api, const ApiRequest& req) {
  if (req.method != Method::kGet) return MethodNotAllowed("GET");
  const std::string id(req.route.id);
  std::string with;
  std::string error;
  if (!ParseCompareQuery(req.target, &with, &error)) return ErrorAnswer(400, error);
  for (const std::string& build : {id, with}) {
    if (build.empty()) continue;
    if (!ValidBuildId(build) || api.manager.Get(build).outcome != builds::GetOutcome::kFound) {
      return ErrorAnswer(404, "no build \"" + build + "\"; list builds with GET /builds");
    }
  }
  return HistoryResponse(builds::CompareBuilds(api.store, id, with));
}

}  // namespace trtwatch::service
