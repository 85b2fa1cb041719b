#include "mcp/tasks.h"

#include "mcp/json_rpc.h"

namespace trtwatch::mcp {

namespace {

// How often a client should poll tasks/get: builds take seconds to hours.
constexpr int kPollIntervalMs = 1000;

std::string TaskStatus(const std::string& build_status) {
  if (build_status == "queued" || build_status == "running") return "working";
  if (build_status == "succeeded") return "completed";
  if (build_status == "cancelled" || build_status == "cancelling") return "cancelled";
  return "failed";  // failed, timed_out, interrupted
}

bool Terminal(const std::string& task_status) { return task_status != "working"; }

TaskAnswer Error(int code, std::string message) { return {json(), code, std::move(message)}; }

}  // namespace

json TaskOf(const json& record) {
  std::string updated = Str(record, "created_at");
  const json cancel = record.value("cancel", json());
  for (const std::string& t : {Str(record, "started_at"), Str(cancel, "requested_at"), Str(record, "finished_at")}) {
    if (t > updated) updated = t;  // one ISO 8601 format: the text order is the time order
  }
  const std::string status = TaskStatus(Str(record, "status"));
  json task = {{"taskId", Str(record, "id")},
               {"status", status},
               {"statusMessage", Summary(record)},
               {"createdAt", Str(record, "created_at")},
               {"lastUpdatedAt", updated},
               {"ttl", nullptr}};  // kept as long as the service keeps the build's record
  if (!Terminal(status)) task["pollInterval"] = kPollIntervalMs;
  return task;
}

json RelatedTaskMeta(const std::string& id) { return {{"io.modelcontextprotocol/related-task", {{"taskId", id}}}}; }

TaskAnswer Tasks::Create(const json& arguments) {
  bool wait = true;  // irrelevant: a task never waits
  std::string error;
  const std::optional<json> record = tools_.SubmitBuild(arguments, caller_, &wait, &error);
  // No build, no task: the reason is the request's error.
  if (!record) return Error(rpc_error::kInvalidParams, "invalid params: " + error);
  return {{{"task", TaskOf(*record)}}, 0, ""};
}

bool Tasks::Find(const json& params, json* record, TaskAnswer* error) {
  if (!params.contains("taskId") || !params["taskId"].is_string()) {
    *error = Error(rpc_error::kInvalidParams, "invalid params: \"taskId\" must be a string (a task id from tools/call)");
    return false;
  }
  const std::string id = params["taskId"].get<std::string>();
  BuildsResult r = tools_.builds().Get(id);
  if (r.outcome != Outcome::kOk) {
    *error = Error(rpc_error::kInvalidParams, "invalid params: no task \"" + id + "\" (" + r.error +
                                                  "); tasks/list lists them");
    return false;
  }
  *record = std::move(r.record);
  return true;
}

TaskAnswer Tasks::Get(const json& params) {
  json record;
  TaskAnswer error;
  if (!Find(params, &record, &error)) return error;
  return {TaskOf(record), 0, ""};
}

TaskAnswer Tasks::Cancel(const json& params) {
  json record;
  TaskAnswer error;
  if (!Find(params, &record, &error)) return error;
  const std::string id = Str(record, "id");
  if (Terminal(TaskStatus(Str(record, "status")))) {
    return Error(rpc_error::kInvalidParams, "invalid params: task \"" + id + "\" is " +
                                                TaskStatus(Str(record, "status")) + " already: nothing to cancel");
  }
  BuildsResult r = tools_.CancelAs(id, "cancelled by the MCP client (tasks/cancel)", caller_);
  if (r.outcome == Outcome::kForbidden) return Error(rpc_error::kInvalidParams, "invalid params: " + r.error);
  if (r.outcome != Outcome::kOk && r.outcome != Outcome::kAlreadyFinished) {
    return Error(rpc_error::kInternalError, "internal error: task \"" + id + "\" could not be cancelled: " + r.error);
  }
  return {TaskOf(r.record.is_object() ? r.record : record), 0, ""};
}

TaskAnswer Tasks::List(const json& params) {
  if (params.contains("cursor")) {
    return Error(rpc_error::kInvalidParams, "invalid params: unknown cursor (tasks/list returns one page)");
  }
  json tasks = json::array();
  for (const json& record : tools_.builds().List({}, 200)) tasks.push_back(TaskOf(record));
  return {{{"tasks", tasks}}, 0, ""};
}

TaskAnswer Tasks::Result(const json& params, const std::shared_ptr<PendingCall>& call) {
  json record;
  TaskAnswer error;
  if (!Find(params, &record, &error)) return error;
  tools_.WaitForEnd(Str(record, "id"), call);
  return {};
}

}  // namespace trtwatch::mcp
