#include "mcp/session.h"

namespace trtwatch::mcp {

namespace {

bool SupportedVersion(const std::string& v) {
  for (const char* s : kProtocolVersions) {
    if (v == s) return true;
  }
  return false;
}

}  // namespace

std::string Instructions() {
  return "trtwatch builds NVIDIA TensorRT engines (or simulated builds) with live progress. Call build_engine with "
         "\"simulate\" (a profile) or \"model\" (an ONNX path); it reports progress while it runs and returns the "
         "build record. Give a \"timeout\" budget for long builds, or wait=false to get the id at once and follow it "
         "with get_build. Cancelling the request, or cancel_build, stops the build cleanly at TensorRT's next step.";
}

Session::Session(Tools& tools, ServerInfo info, Send send, Caller caller)
    : tools_(tools), caller_(std::move(caller)), info_(std::move(info)), send_(std::move(send)) {}

Session::~Session() {
  // Calls still waiting stop waiting (their builds go on); nothing more is sent.
  for (auto& [key, call] : in_flight_) call->set_on_cancel(nullptr);
}

void Session::Receive(std::string_view text) { Receive(ParseMessage(text)); }

void Session::Receive(const Message& m) {
  switch (m.kind) {
    case Message::Kind::kInvalid:
      send_(m.error_response, m.error_response["id"]);
      return;
    case Message::Kind::kResponse:
      return;  // this server sends no requests of its own
    case Message::Kind::kNotification:
      return Notification(m);
    case Message::Kind::kRequest:
      return Request(m);
  }
}

void Session::Notification(const Message& m) {
  if (m.method != "notifications/cancelled") return;  // initialized, roots/list_changed...: nothing to do
  if (!m.params.contains("requestId")) return;
  auto it = in_flight_.find(IdKey(m.params["requestId"]));
  if (it == in_flight_.end()) return;  // finished already, or never ours: ignored, as the spec says
  std::shared_ptr<PendingCall> call = it->second;
  in_flight_.erase(it);
  const json reason = m.params.value("reason", json());
  call->Cancel(reason.is_string() ? reason.get<std::string>() : std::string());
}

void Session::Request(const Message& m) {
  auto reply = [&](json result) { send_(ResultResponse(m.id, std::move(result)), m.id); };
  auto error = [&](int code, std::string message) { send_(ErrorResponse(m.id, code, std::move(message)), m.id); };
  if (m.method == "ping") return reply(json::object());
  if (m.method == "initialize") {
    if (initialized()) return error(rpc_error::kInvalidRequest, "invalid request: the session is initialized already");
    if (!m.params.contains("protocolVersion") || !m.params["protocolVersion"].is_string()) {
      return error(rpc_error::kInvalidParams, "invalid params: initialize needs \"protocolVersion\" (a string such as \"2025-11-25\")");
    }
    return reply(Initialize(m.params));
  }
  if (!initialized()) {
    return error(rpc_error::kInvalidRequest, "invalid request: the session is not initialized; send initialize first");
  }
  if (m.method == "tools/list") {
    json tools = tools_.List();
    for (json& t : tools) {
      if (!Structured()) {
        t.erase("outputSchema");
        t.erase("title");
      }
      if (TasksSupported() && Tasks::SupportsTask(t["name"].get<std::string>())) {
        t["execution"] = {{"taskSupport", "optional"}};
      }
    }
    return reply({{"tools", tools}});
  }
  if (m.method == "tools/call") return CallTool(m);
  if (TasksSupported()) {
    auto answer = [&](const TaskAnswer& a) { return a.error_code != 0 ? error(a.error_code, a.error) : reply(a.result); };
    if (m.method == "tasks/get") return answer(tasks_.Get(m.params));
    if (m.method == "tasks/cancel") return answer(tasks_.Cancel(m.params));
    if (m.method == "tasks/list") return answer(tasks_.List(m.params));
    if (m.method == "tasks/result") return TaskResult(m);
  }
  error(rpc_error::kMethodNotFound, "method not found: \"" + m.method + "\"; this server offers initialize, ping, "
                                     "tools/list and tools/call" +
                                     std::string(TasksSupported() ? ", tasks/get, tasks/result, tasks/cancel and "
                                                                    "tasks/list" : ""));
}

json Session::Initialize(const json& params) {
  const std::string asked = params["protocolVersion"].get<std::string>();
  protocol_version_ = SupportedVersion(asked) ? asked : kProtocolVersions[0];
  json capabilities = {{"tools", {{"listChanged", false}}}};
  if (TasksSupported()) {
    capabilities["tasks"] = {{"list", json::object()},
                             {"cancel", json::object()},
                             {"requests", {{"tools", {{"call", json::object()}}}}}};
  }
  json result = {{"protocolVersion", protocol_version_},
                 {"capabilities", capabilities},
                 {"serverInfo", {{"name", "trtwatch"}, {"version", info_.version}}},
                 {"instructions", info_.instructions}};
  if (Structured()) result["serverInfo"]["title"] = "trtwatch: TensorRT engine builds";
  return result;
}

std::shared_ptr<PendingCall> Session::Pending(const Message& m, std::function<void(const ProgressReport&)> progress,
                                              std::function<json(json)> shape_result) {
  const std::string key = IdKey(m.id);
  if (in_flight_.count(key)) {
    send_(ErrorResponse(m.id, rpc_error::kInvalidRequest, "invalid request: id " + m.id.dump() + " is already in use by a request in flight"), m.id);
    return nullptr;
  }
  const json id = m.id;
  std::weak_ptr<bool> alive = alive_;
  auto call = std::make_shared<PendingCall>(std::move(progress), [this, alive, key, id, shape_result](json result) {
    if (alive.expired()) return;
    in_flight_.erase(key);
    send_(ResultResponse(id, shape_result(std::move(result))), id);
  });
  in_flight_[key] = call;
  return call;
}

void Session::CallTool(const Message& m) {
  if (!m.params.contains("name") || !m.params["name"].is_string()) {
    send_(ErrorResponse(m.id, rpc_error::kInvalidParams, "invalid params: tools/call needs \"name\" (a string)"), m.id);
    return;
  }
  const std::string name = m.params["name"].get<std::string>();
  if (!tools_.Has(name)) {
    send_(ErrorResponse(m.id, rpc_error::kInvalidParams,
                        "unknown tool: \"" + name + "\"; list the tools with tools/list"),
          m.id);
    return;
  }
  json arguments = m.params.value("arguments", json::object());
  if (arguments.is_null()) arguments = json::object();
  if (!arguments.is_object()) {
    send_(ErrorResponse(m.id, rpc_error::kInvalidParams, "invalid params: \"arguments\" must be an object"), m.id);
    return;
  }
  if (TasksSupported() && m.params.contains("task") && !m.params["task"].is_null()) {
    if (!m.params["task"].is_object()) {
      send_(ErrorResponse(m.id, rpc_error::kInvalidParams, "invalid params: \"task\" must be an object such as {}"),
            m.id);
      return;
    }
    if (!Tasks::SupportsTask(name)) {
      send_(ErrorResponse(m.id, rpc_error::kMethodNotFound,
                          "tool \"" + name + "\" does not run as a task (its execution.taskSupport is forbidden); "
                          "call it without \"task\""),
            m.id);
      return;
    }
    const TaskAnswer a = tasks_.Create(arguments);
    send_(a.error_code != 0 ? ErrorResponse(m.id, a.error_code, a.error) : ResultResponse(m.id, a.result), m.id);
    return;
  }
  json token;
  if (m.params.contains("_meta") && m.params["_meta"].is_object() && m.params["_meta"].contains("progressToken")) {
    token = m.params["_meta"]["progressToken"];
    if (!token.is_string() && !token.is_number_integer()) token = nullptr;
  }
  const json id = m.id;
  std::weak_ptr<bool> alive = alive_;
  std::function<void(const ProgressReport&)> progress;
  if (!token.is_null()) {
    progress = [this, alive, token, id](const ProgressReport& r) {
      if (alive.expired()) return;
      json params = {{"progressToken", token}, {"progress", r.progress}, {"message", r.message}};
      if (r.total) params["total"] = *r.total;
      send_(NotificationMessage("notifications/progress", std::move(params)), id);
    };
  }
  const bool structured = Structured();
  std::shared_ptr<PendingCall> call = Pending(m, std::move(progress), [structured](json result) {
    if (!structured) result.erase("structuredContent");
    return result;
  });
  if (call) tools_.Call(name, arguments, call, caller_);
}

void Session::TaskResult(const Message& m) {
  const std::string task_id =
      m.params.contains("taskId") && m.params["taskId"].is_string() ? m.params["taskId"].get<std::string>() : "";
  std::shared_ptr<PendingCall> call = Pending(m, nullptr, [task_id](json result) {
    result["_meta"] = RelatedTaskMeta(task_id);
    return result;
  });
  if (!call) return;
  const TaskAnswer a = tasks_.Result(m.params, call);
  if (a.error_code != 0) {
    in_flight_.erase(IdKey(m.id));
    send_(ErrorResponse(m.id, a.error_code, a.error), m.id);
  }
}

}  // namespace trtwatch::mcp
