#include "service/api_builds.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "builds/audit_log.h"
#include "builds/build_groups.h"
#include "builds/stores/record_store.h"
#include "protocol/event_json.h"
#include "protocol/json_body.h"
#include "service/access_check.h"
#include "service/api_outcomes.h"
#include "service/http_request.h"
#include "sinks/trace_sink.h"

namespace trtwatch::service {

using builds::BuildState;
using builds::GetOutcome;
using builds::GetResult;
using nlohmann::json;

namespace {

// POST /builds: the body is read once, here; the manager (or the groups, for a request
// that asks for a group) checks it and the typed request travels with the build, with
// the caller as its submitter.
ApiAnswer Submit(ApiContext& api, const ApiRequest& req) {
  const JsonBody body = ParseJsonBody(req.body);
  const std::string caller(req.caller);
  if (builds::BuildGroups::AsksForGroup(body)) {
    builds::GroupResult r = api.manager.groups().Submit(body, caller);
    const std::string location = r.outcome == builds::GroupOutcome::kCreated ? "/groups/" + r.id : std::string();
    if (!location.empty()) (void)api.audit.RecordSubmit(req.caller, true, r.id, r.record);
    ApiAnswer answer = ManagerAnswer(std::move(r));
    if (!location.empty()) answer.Set("Location", location);
    return answer;
  }
  Result<builds::BuildRequest> parsed = api.manager.Parse(body);
  if (!parsed.ok()) return ManagerAnswer(builds::Refusal(builds::SubmitOutcome::kInvalid, parsed.error()));
  parsed.value().submitted_by = caller;
  builds::SubmitResult r = api.manager.Submit(std::move(parsed).value());
  const std::string location = r.outcome == builds::SubmitOutcome::kCreated ? "/builds/" + r.id : std::string();
  if (!location.empty()) (void)api.audit.RecordSubmit(req.caller, false, r.id, r.record);
  ApiAnswer answer = ManagerAnswer(std::move(r));
  if (!location.empty()) answer.Set("Location", location);
  return answer;
}

bool IsFinalName(const json& status) {
  BuildState state;
  return status.is_string() && builds::ParseBuildState(status.get<std::string>(), &state) && builds::IsFinal(state);
}

// GET /builds?group=GID: the group's members (at most 16: one page), in its order.
ApiAnswer ListGroup(ApiContext& api, const ListQuery& query) {
  std::string body = "{\"builds\":[";
  bool first = true;
  for (const std::string& record : api.manager.groups().MemberRecords(query.group)) {
    const json doc = json::parse(record, nullptr, false);
    if (!query.statuses.empty() && doc.is_object() && doc.contains("status") &&
        std::find(query.statuses.begin(), query.statuses.end(), doc["status"]) == query.statuses.end()) {
      continue;
    }
    if (!first) body += ',';
    first = false;
    body += record;
  }
  body += "],\"next_cursor\":null}";
  return JsonAnswer(200, std::move(body));
}

ApiAnswer List(ApiContext& api, const ApiRequest& req) {
  ListQuery query;
  std::string error;
  if (!ParseListQuery(req.target, &query, &error)) return ErrorAnswer(400, error);
  if (!query.group.empty()) return ListGroup(api, query);
  Result<builds::RecordStore::Page> listed =
      api.store.List(query.statuses, static_cast<int>(query.limit), query.cursor, query.model);
  // An unreadable store lists no builds.
  const builds::RecordStore::Page page = listed.ok() ? std::move(listed).value() : builds::RecordStore::Page{};
  std::string body = "{\"builds\":[";
  for (size_t i = 0; i < page.docs.size(); ++i) {
    if (i) body += ',';
    // Live builds are answered from memory: the stored document lags their progress.
    json doc = json::parse(page.docs[i], nullptr, false);
    if (doc.is_object() && doc.contains("status") && !IsFinalName(doc["status"])) {
      GetResult live = api.manager.Get(doc["id"].get<std::string>());
      body += live.outcome == GetOutcome::kFound ? live.record : page.docs[i];
    } else {
      body += page.docs[i];
    }
  }
  body += "],\"next_cursor\":";
  body += page.next_cursor ? json(std::to_string(*page.next_cursor)).dump() : "null";
  body += '}';
  return JsonAnswer(200, std::move(body));
}

// GET /builds/{id}/trace: the stored events as a Chrome trace (the same document as
// `trtwatch build --trace`); a live build's open phases end at its latest event.
ApiAnswer Trace(ApiContext& api, const std::string& id) {
  GetResult record = api.manager.Get(id);
  if (record.outcome != GetOutcome::kFound) return ManagerAnswer(std::move(record));
  TraceBuilder trace;
  const Status read = api.store.ForEachEvent(id, 0, [&trace](const builds::StoredEvent& stored) {
    Event event;
    std::string ignored;  // the log holds only lines the service validated
    if (EventFromJson(stored.json, &event, &ignored)) trace.Apply(event);
  });
  if (!read.ok()) {
    return ErrorAnswer(500, "the event log of \"" + id + "\" could not be read: " + read.error());
  }
  ApiAnswer answer = JsonAnswer(200, trace.Json());
  answer.Set("Content-Disposition", "attachment; filename=\"" + id + ".trace.json\"");
  return answer;
}

// A builder cancels only what they submitted (access_check.h); an unknown build is the
// manager's 404.
std::optional<ApiAnswer> BuildNotTheirs(ApiContext& api, const ApiRequest& req, const std::string& id) {
  if (req.caller.empty()) return std::nullopt;
  GetResult record = api.manager.Get(id);
  if (record.outcome != GetOutcome::kFound) return std::nullopt;
  return RecordOwnershipRefusal(req.caller, record.record, CurrentUsers(api), "build " + id);
}

// POST /builds/{id}/cancel, by its submitter or an admin; a cancel that took (now or
// before: it is idempotent) is recorded with the record's reason.
ApiAnswer Cancel(ApiContext& api, const ApiRequest& req, const std::string& id) {
  if (std::optional<ApiAnswer> refused = BuildNotTheirs(api, req, id)) return std::move(*refused);
  builds::CancelResult r = api.manager.Cancel(id, req.body, std::string(req.caller));
  if (r.outcome == builds::CancelOutcome::kCancelled || r.outcome == builds::CancelOutcome::kCancelling) {
    (void)api.audit.RecordCancel(req.caller, id, r.record);
  }
  return ManagerAnswer(std::move(r));
}

}  // namespace

ApiAnswer BuildsAnswer(ApiContext& api, const ApiRequest& req) {
  if (req.method == Method::kPost) return Submit(api, req);
  if (req.method == Method::kGet) return List(api, req);
  return MethodNotAllowed("GET, POST");
}

ApiAnswer BuildAnswer(ApiContext& api, const ApiRequest& req) {
  const std::string id(req.route.id);
  if (!ValidBuildId(id)) return ErrorAnswer(404, "no build \"" + id + "\"; build ids look like b_ and 32 hex digits");
  switch (req.route.endpoint) {
    case Endpoint::kBuildEvents:
      return MethodNotAllowed("GET");
    case Endpoint::kBuildTrace:
      if (req.method != Method::kGet) return MethodNotAllowed("GET");
      return Trace(api, id);
    case Endpoint::kBuildCancel:
      if (req.method != Method::kPost) return MethodNotAllowed("POST");
      return Cancel(api, req, id);
    default:
      if (req.method != Method::kGet) return MethodNotAllowed("GET");
      return ManagerAnswer(api.manager.Get(id));
  }
}

ApiAnswer BuildChangesAnswer(ApiContext&, const ApiRequest&) { return MethodNotAllowed("GET"); }

}  // namespace trtwatch::service
