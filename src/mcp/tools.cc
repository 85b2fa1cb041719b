#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "mcp/tools.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <set>

#include "backends/simulated/builtin_profiles.h"
#include "runner/duration.h"
#include "sinks/format.h"

namespace trtwatch::mcp {

namespace asio = boost::asio;

namespace {

const char* const kStates[] = {"queued", "running", "cancelling", "succeeded",
                               "failed", "cancelled", "timed_out", "interrupted"};


// The record's "cache": the engine cache's answer.
json EngineCacheSchema() {
  return {{"type", {"object", "null"}},
          {"description",
           "the engine cache's answer (real builds): state hit (the engine was reused, no builder ran) or miss "
           "(built, and stored once it succeeded), key (the build key), and for a hit age_seconds (how long ago "
           "the reused engine was built) and built_seconds (how long that build took); null where the build "
           "used no cache (simulated, \"cache\": false, not started yet)"},
          {"properties",
           {{"state", {{"type", "string"}, {"enum", {"hit", "miss"}}}},
            {"key", {{"type", "string"}, {"pattern", "^[0-9a-f]{64}$"}}},
            {"age_seconds", {{"type", {"number", "null"}}, {"minimum", 0}}},
            {"built_seconds", {{"type", {"number", "null"}}, {"minimum", 0}}}}},
          {"required", {"state", "key"}}};
}

json RecordSchema() {
  json states = json::array();
  for (const char* s : kStates) states.push_back(s);
  const json nullable_string = {{"type", {"string", "null"}}};
  const json nullable_int = {{"type", {"integer", "null"}}};
  return {{"type", "object"},
          {"description", "A build record, as GET /builds/{id} of `trtwatch serve` returns it"},
          {"properties",
           {{"id", {{"type", "string"}, {"description", "b_ and 32 hex digits"}}},
            {"status", {{"type", "string"}, {"enum", states}}},
            {"backend", {{"type", "string"}, {"description", "simulated or tensorrt"}}},
            {"url", {{"type", "string"}}},
            {"events_url", {{"type", "string"}}},
            {"request", {{"type", "object"}}},
            {"model", nullable_string},
            {"created_at", nullable_string},
            {"started_at", nullable_string},
            {"finished_at", nullable_string},
            {"cancel",
             {{"type", {"object", "null"}},
              {"description", "reason (api, budget, shutdown), message, requested_at, latency"}}},
            {"phase", {{"type", {"object", "null"}}, {"description", "the live phase snapshot"}}},
            {"events", {{"type", "integer"}}},
            {"error", nullable_string},
            {"engine",
             {{"type", {"object", "null"}},
              {"description", "the stored engine: path, size, sha256, url (GET it over HTTP to download)"}}},
            {"timing_cache",
             {{"type", {"object", "null"}},
              {"description", "a copy of the timing cache the build wrote: path, size, sha256, url"}}},
            {"fleet_timing_cache",
             {{"type", {"object", "null"}},
              {"description", "the server's timing cache for the build's TensorRT version and GPU that the build "
                              "was given (name, url); null where it had none (\"timing_cache\": false, a cache "
                              "of its own, not started yet)"}}},
            {"cache", EngineCacheSchema()},
            {"worker_pid", nullable_int},
            {"job",
             {{"type", {"object", "null"}},
              {"description", "the build's Slurm job (serve --executor slurm): id, state, pending_reason, node, gpu"}}},
            {"reason",
             {{"type", {"string", "null"}},
              {"description", "why Slurm ended it: slurm_node_fail, slurm_time_limit, slurm_cancelled, ..."}}},
            {"exit_code", nullable_int},
            {"exit_signal", nullable_int},
            {"group",
             {{"type", {"object", "null"}},
              {"description", "the build group it is a member of (build_engine with targets): id, target"}}}}},
          {"required", {"id", "status", "backend"}}};
}

json ProfileNames() {
  json names = json::array();
  for (const auto& p : sim::BuiltinProfiles()) names.push_back(p.name);
  return names;
}

// A succeeded build's part of the engine cache, as the terminal words it: "; reused the
// engine built 3 days ago in 14m02s (engine cache, key 3e78f9d53e9c)".
std::string CacheText(const json& cache) {
  const std::string state = Str(cache, "state");
  if (state == "miss") return "; built and stored in the engine cache";
  if (state != "hit") return "";
  CacheUse use{Str(cache, "key"), state, std::nullopt, std::nullopt};
  const json age = cache.value("age_seconds", json());
  const json built = cache.value("built_seconds", json());
  if (age.is_number()) use.age_seconds = age.get<double>();
  if (built.is_number()) use.built_seconds = built.get<double>();
  return "; " + FormatReuse(use);
}

}  // namespace

bool IsFinalStatus(const std::string& s) { return s != "queued" && s != "running" && s != "cancelling"; }

std::string Str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

std::string Summary(const json& record) {
  const std::string id = Str(record, "id");
  const std::string status = Str(record, "status");
  std::string what = Str(record, "backend") == "simulated"
                         ? "simulated " + Str(record.value("request", json::object()), "simulate")
                         : Str(record, "model");
  std::string text = "Build " + id + " (" + what + "): " + status;
  if (status == "queued" || status == "running" || status == "cancelling") {
    const Position pos = PositionOf(record);
    if (!pos.where.empty()) text += ", " + pos.where;
  }
  const json cancel = record.value("cancel", json());
  if (cancel.is_object() && (status == "cancelled" || status == "cancelling")) {
    text += " (reason " + Str(cancel, "reason") + ")";
  }
  const std::string error = Str(record, "error");
  if (!error.empty()) text += ": " + error;
  const std::string engine = Str(record.value("engine", json::object()), "path");
  if (status == "succeeded" && !engine.empty()) text += "; engine at " + engine;
  if (status == "succeeded") text += CacheText(record.value("cache", json()));
  const std::string timing_cache = Str(record.value("fleet_timing_cache", json::object()), "name");
  if (!timing_cache.empty()) text += "; timing cache " + timing_cache;
  return text + ".";
}

namespace {

// Arguments not in `known` are refused: a misspelt "timout" must not pass silently.
bool UnknownArgument(const json& args, const std::set<std::string>& known, std::string* error) {
  for (const auto& [key, value] : args.items()) {
    if (!known.count(key)) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      *error = "unknown argument \"" + key + "\"; the arguments are " + (list.empty() ? "none" : list);
      return true;
    }
  }
  return false;
}

bool BuildId(const json& args, std::string* id, std::string* error) {
  if (!args.contains("id") || !args["id"].is_string() || args["id"].get<std::string>().empty()) {
    *error = "\"id\" must be a build id string such as \"b_0123...\"; find ids with list_builds";
    return false;
  }
  *id = args["id"].get<std::string>();
  return true;
}

}  // namespace

json ToolResult(const std::string& text, const json& structured, bool is_error) {
  json content = json::array({{{"type", "text"}, {"text", text}}});
  content.push_back({{"type", "text"}, {"text", structured.dump(-1, ' ', false, json::error_handler_t::replace)}});
  return {{"content", content}, {"structuredContent", structured}, {"isError", is_error}};
}

json ToolError(const std::string& text) {
  return {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"isError", true}};
}

// A build_engine call waiting for its build to end.
struct Tools::Waiter {
  std::string id;
  std::shared_ptr<PendingCall> call;
  ProgressTracker tracker;
  std::unique_ptr<BuildWatch> watch;
  std::unique_ptr<asio::steady_timer> tick;
  std::chrono::steady_clock::time_point last_event;
};

// A build's time budget: cancels it with reason "budget" unless it ends first.
struct Tools::Budget {
  std::unique_ptr<asio::steady_timer> timer;
  std::unique_ptr<BuildWatch> watch;
};

Tools::Tools(asio::io_context& io, Builds& builds, ToolOptions options)
    : io_(io), builds_(builds), options_(std::move(options)) {}

Tools::~Tools() { Stop(); }

void Tools::Stop() {
  waiters_.clear();
  budgets_.clear();
}

void Tools::CancelQueued(const std::string& message) {
  for (const std::string& id : std::exchange(started_, {})) {
    BuildsResult r = builds_.Get(id);
    if (r.outcome == Outcome::kOk && Str(r.record, "status") == "queued") builds_.Cancel(id, "signal", message, "");
  }
}

// function-length: table (the tools' JSON schemas, one entry per tool)
json Tools::List() const {
  const json record = RecordSchema();
  const json id_input = {{"type", "object"},
                         {"properties", {{"id", {{"type", "string"}, {"description", "The build id (b_...)"}}}}},
                         {"required", {"id"}},
                         {"additionalProperties", false}};
  json build_input = {
      {"type", "object"},
      {"properties",
       {{"simulate",
         {{"type", "string"},
          {"enum", ProfileNames()},
          {"description", "Simulate a TensorRT-like build with this profile (no GPU needed; says it is simulated)"}}},
        {"seed", {{"type", "integer"}, {"minimum", 0}, {"description", "Seed of the simulation"}}},
        {"speed",
         {{"type", "number"},
          {"minimum", 0.01},
          {"maximum", 1000},
          {"description", "Time scale of the simulation (4 = four times as fast)"}}},
        {"model",
         {{"type", "string"},
          {"description",
           "ONNX model path inside one of the server's model roots, or \"models:NAME\" for a model uploaded "
           "with PUT /models/NAME"}}},
        {"options",
         {{"type", "object"},
          {"additionalProperties", {{"type", {"boolean", "number", "string"}}}},
          {"description", "trtexec-like options of a real build without dashes, e.g. {\"fp16\": true}"}}},
        {"timeout",
         {{"type", {"string", "number"}},
          {"description", "Time budget (\"90s\", \"30m\", \"2h\" or seconds): the build is cancelled with reason "
                          "budget when it runs longer"}}},
        {"gpu",
         {{"type", "object"},
          {"properties",
           {{"type", {{"type", "string"}, {"description", "A GPU type the server knows (its --gpu-type), e.g. h200"}}},
            {"compute_capability", {{"type", "string"}, {"description", "e.g. \"9.0\""}}}}},
          {"additionalProperties", false},
          {"description", "The GPU to build on, where the engine will run: one of type or compute_capability"}}},
        {"targets",
         {{"type", "array"},
          {"items", {{"type", "string"}}},
          {"minItems", 1},
          {"maxItems", 16},
          {"uniqueItems", true},
          {"description",
           "GPU types the server knows (its --gpu-type), e.g. [\"h200\", \"a100\", \"l4\"]: one build per type, as "
           "a group whose manifest maps each compute capability to its engine (Triton's cc_model_filenames). "
           "Not with gpu; returns at once with the group (follow its members with get_build)"}}},
        {"cache",
         {{"type", "boolean"},
          {"default", true},
          {"description", "false: build even when the server's engine cache has this engine (real builds; "
                          "the result's cache is null then)"}}},
        {"timing_cache",
         {{"type", "boolean"},
          {"default", true},
          {"description", "false: build without the server's timing cache for this TensorRT version and GPU "
                          "(it saves most tactic measurements; the result's fleet_timing_cache names the one used)"}}},
        {"wait",
         {{"type", "boolean"},
          {"default", true},
          {"description", "true: return when the build ends, with progress notifications meanwhile; false: return "
                          "at once with the queued build (follow it with get_build)"}}}}},
      {"additionalProperties", false}};
  json tools = json::array();
  tools.push_back({{"name", "build_engine"},
                   {"title", "Build a TensorRT engine"},
                   {"description",
                    "Build a TensorRT engine from an ONNX model (\"model\": a path under a model root or \"models:NAME\" for an "
                    "uploaded model; \"options\"), or a simulated build "
                    "(\"simulate\"). Sends progress notifications naming the phase the build is in; cancelling the "
                    "request cancels the build cooperatively. Returns the build record."},
                   {"inputSchema", build_input},
                   {"outputSchema", record}});
  tools.push_back({{"name", "get_build"},
                   {"title", "Get a build"},
                   {"description", "The record of one build: status, phase, error, cancel reason, engine path."},
                   {"inputSchema", id_input},
                   {"outputSchema", record},
                   {"annotations", {{"readOnlyHint", true}}}});
  json states = json::array();
  for (const char* s : kStates) states.push_back(s);
  tools.push_back(
      {{"name", "list_builds"},
       {"title", "List builds"},
       {"description", "The newest builds first, optionally only those with the given statuses."},
       {"inputSchema",
        {{"type", "object"},
         {"properties",
          {{"status", {{"type", "array"}, {"items", {{"type", "string"}, {"enum", states}}}}},
           {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 200}, {"default", 20}}}}},
         {"additionalProperties", false}}},
       {"outputSchema",
        {{"type", "object"}, {"properties", {{"builds", {{"type", "array"}, {"items", record}}}}}, {"required", {"builds"}}}},
       {"annotations", {{"readOnlyHint", true}}}});
  tools.push_back({{"name", "cancel_build"},
                   {"title", "Cancel a build"},
                   {"description",
                    "Ask a queued or running build to stop. TensorRT stops at its next step; the record becomes "
                    "cancelling, then cancelled. Cancelling twice is harmless."},
                   {"inputSchema", id_input},
                   {"outputSchema", record},
                   {"annotations", {{"destructiveHint", true}, {"idempotentHint", true}}}});
  tools.push_back({{"name", "doctor"},
                   {"title", "Check this machine"},
                   {"description", "The NVIDIA driver and GPUs, TensorRT at compile and run time, and the backends "
                                   "this trtwatch can use (as `trtwatch doctor --json`)."},
                   {"inputSchema", {{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}}},
                   {"outputSchema", {{"type", "object"}}},
                   {"annotations", {{"readOnlyHint", true}}}});
  return tools;
}

void Tools::WaitForEnd(const std::string& id, const std::shared_ptr<PendingCall>& call) {
  Wait(id, call, /*cancel_build_with_call=*/false);
}

bool Tools::Has(const std::string& name) const {
  return name == "build_engine" || name == "get_build" || name == "list_builds" || name == "cancel_build" ||
         name == "doctor";
}

void Tools::Call(const std::string& name, const json& args, const std::shared_ptr<PendingCall>& call,
                 const Caller& caller) {
  if (name == "build_engine") return BuildEngine(args, call, caller);
  if (name == "get_build") return GetBuild(args, call);
  if (name == "list_builds") return ListBuilds(args, call);
  if (name == "cancel_build") return CancelBuild(args, call, caller);
  std::string error;
  if (UnknownArgument(args, {}, &error)) return call->Finish(ToolError(error));
  if (!options_.doctor) return call->Finish(ToolError("doctor is not available in this server"));
  call->Finish(ToolResult("The machine as trtwatch doctor sees it.", options_.doctor(), false));
}

std::optional<json> Tools::SubmitBuild(const json& args, const Caller& caller, bool* wait, std::string* error) {
  if (UnknownArgument(
          args, {"simulate", "seed", "speed", "model", "options", "timeout", "gpu", "cache", "timing_cache", "wait"},
          error)) {
    return std::nullopt;
  }
  *wait = true;
  if (args.contains("wait")) {
    if (!args["wait"].is_boolean()) {
      *error = "\"wait\" must be true or false";
      return std::nullopt;
    }
    *wait = args["wait"].get<bool>();
  }
  double budget = options_.max_build_seconds;
  std::string budget_source = "the server's maximum build time";
  if (args.contains("timeout")) {
    const json& t = args["timeout"];
    const std::string text = t.is_string() ? t.get<std::string>() : t.is_number() ? t.dump() : std::string();
    double seconds = 0;
    std::string why;
    if (text.empty() || !ParseDuration(text, &seconds, &why)) {
      *error = "\"timeout\": " + (why.empty() ? "must be a duration like \"30m\"" : why);
      return std::nullopt;
    }
    if (budget <= 0 || seconds < budget) {
      budget = seconds;
      budget_source = "its timeout argument";
    }
  }
  json request = args;
  request.erase("timeout");
  request.erase("wait");
  BuildsResult r = builds_.Submit(request, caller);
  if (r.outcome != Outcome::kOk) {
    *error = "The build was not started: " + r.error;
    return std::nullopt;
  }
  const std::string id = Str(r.record, "id");
  started_.push_back(id);
  if (started_.size() > 1000) started_.erase(started_.begin());  // only the queue matters; it is shorter
  if (budget > 0) StartBudget(id, budget, budget_source);
  return r.record;
}

json Tools::SubmitGroup(const json& args, const Caller& caller) {
  std::string error;
  if (UnknownArgument(args,
                      {"simulate", "seed", "speed", "model", "options", "timeout", "targets", "cache",
                       "timing_cache", "wait"},
                      &error)) {
    return ToolError(error);
  }
  if (args.contains("wait") && args["wait"] != false) {
    return ToolError("\"wait\" applies to one build: a group (\"targets\") returns at once; leave \"wait\" out and "
                     "follow its members with get_build");
  }
  json request = args;
  request.erase("wait");
  BuildsResult r = builds_.SubmitGroup(request, caller);
  if (r.outcome != Outcome::kOk) return ToolError("The build group was not started: " + r.error);
  std::string members;
  for (const json& m : r.record.value("members", json::array())) {
    const std::string id = Str(m, "build");
    members += (members.empty() ? "" : ", ") + id + " (" + Str(m, "target") + ")";
    if (options_.max_build_seconds > 0) StartBudget(id, options_.max_build_seconds, "the server's maximum build time");
  }
  return ToolResult("Build group " + Str(r.record, "id") + " started: " + members +
                        ". Follow each with get_build; the group's manifest (cc_model_filenames) is GET /groups/" +
                        Str(r.record, "id") + "/manifest once every member has ended.",
                    r.record, false);
}

void Tools::BuildEngine(const json& args, const std::shared_ptr<PendingCall>& call, const Caller& caller) {
  if (args.is_object() && args.contains("targets")) return call->Finish(SubmitGroup(args, caller));
  bool wait = true;
  std::string error;
  const std::optional<json> record = SubmitBuild(args, caller, &wait, &error);
  if (!record) return call->Finish(ToolError(error));
  if (!wait || IsFinalStatus(Str(*record, "status"))) {
    return call->Finish(ToolResult(Summary(*record) + (wait ? "" : " Follow it with get_build, stop it with "
                                                                   "cancel_build."),
                                   *record, wait && Str(*record, "status") != "succeeded"));
  }
  Wait(Str(*record, "id"), call, /*cancel_build_with_call=*/true, caller.name);
}

void Tools::StartBudget(const std::string& id, double seconds, const std::string& source) {
  auto budget = std::make_unique<Budget>();
  budget->watch = builds_.Watch(id, [] {}, [this, id] { budgets_.erase(id); });
  if (!budget->watch) return;  // over already
  budget->timer = std::make_unique<asio::steady_timer>(io_);
  budget->timer->expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(seconds)));
  const std::string message =
      "the build exceeded its time budget of " + DurationText(seconds) + " (" + source + ")";
  budget->timer->async_wait([this, id, message](const boost::system::error_code& ec) {
    if (ec) return;
    builds_.Cancel(id, "budget", message, "");
  });
  budgets_[id] = std::move(budget);
}

void Tools::Wait(const std::string& id, const std::shared_ptr<PendingCall>& call, bool cancel_build_with_call,
                 const std::string& by) {
  const uint64_t key = next_waiter_++;
  auto w = std::make_unique<Waiter>();
  w->id = id;
  w->call = call;
  w->last_event = std::chrono::steady_clock::now();
  w->watch = builds_.Watch(
      id,
      [this, key] {
        auto it = waiters_.find(key);
        if (it != waiters_.end()) it->second->last_event = std::chrono::steady_clock::now();
      },
      [this, key] { EndWait(key); });
  call->set_on_cancel([this, key, id, cancel_build_with_call, by](const std::string& reason) {
    if (cancel_build_with_call) {  // the caller's own build: they submitted it with this call
      builds_.Cancel(id, "api",
                     "cancelled by the MCP client" + (reason.empty() ? std::string() : " (" + reason + ")"), by);
    }
    waiters_.erase(key);  // the request is over: no response, no more progress
  });
  if (!w->watch) {  // ended between submit and here
    waiters_[key] = std::move(w);
    return EndWait(key);
  }
  w->tick = std::make_unique<asio::steady_timer>(io_);
  waiters_[key] = std::move(w);
  Tick(key);
}

void Tools::Tick(uint64_t key) {
  auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  Waiter& w = *it->second;
  if (w.call->wants_progress()) {
    BuildsResult r = builds_.Get(w.id);
    if (r.outcome == Outcome::kOk && !IsFinalStatus(Str(r.record, "status"))) {
      const double silent =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - w.last_event).count();
      if (std::optional<ProgressReport> report = w.tracker.Next(r.record, silent)) w.call->Progress(*report);
    }
  }
  w.tick->expires_after(options_.tick);
  w.tick->async_wait([this, key](const boost::system::error_code& ec) {
    if (!ec) Tick(key);
  });
}

void Tools::EndWait(uint64_t key) {
  auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  std::unique_ptr<Waiter> w = std::move(it->second);
  waiters_.erase(it);
  BuildsResult r = builds_.Get(w->id);
  if (r.outcome != Outcome::kOk) return w->call->Finish(ToolError("Build " + w->id + ": " + r.error));
  const std::string status = Str(r.record, "status");
  if (!IsFinalStatus(status)) {  // the server stops; the build stays queued for its restart
    return w->call->Finish(ToolResult(Summary(r.record) + " The server is stopping; the build was not finished.",
                                      r.record, true));
  }
  // No last notification before the result: the result says how the build ended, and
  // the SDK client handles notifications a turn later than responses, so it would
  // drop one sent just before the response as "unknown token".
  w->call->Finish(ToolResult(Summary(r.record), r.record, status != "succeeded"));
}

void Tools::GetBuild(const json& args, const std::shared_ptr<PendingCall>& call) {
  std::string error, id;
  if (UnknownArgument(args, {"id"}, &error) || !BuildId(args, &id, &error)) return call->Finish(ToolError(error));
  BuildsResult r = builds_.Get(id);
  if (r.outcome != Outcome::kOk) return call->Finish(ToolError(r.error + " (list builds with list_builds)"));
  call->Finish(ToolResult(Summary(r.record), r.record, false));
}

void Tools::ListBuilds(const json& args, const std::shared_ptr<PendingCall>& call) {
  std::string error;
  if (UnknownArgument(args, {"status", "limit"}, &error)) return call->Finish(ToolError(error));
  std::vector<std::string> statuses;
  if (args.contains("status")) {
    const json& s = args["status"];
    bool ok = s.is_array();
    for (const json& v : ok ? s : json::array()) {
      ok = ok && v.is_string() && std::find(std::begin(kStates), std::end(kStates), v.get<std::string>()) !=
                                      std::end(kStates);
      if (ok) statuses.push_back(v.get<std::string>());
    }
    if (!ok) {
      return call->Finish(ToolError("\"status\" must be an array of queued, running, cancelling, succeeded, failed, "
                                    "cancelled, timed_out, interrupted"));
    }
  }
  int limit = 20;
  if (args.contains("limit")) {
    if (!args["limit"].is_number_integer() || args["limit"].get<int64_t>() < 1 || args["limit"].get<int64_t>() > 200) {
      return call->Finish(ToolError("\"limit\" must be an integer from 1 to 200"));
    }
    limit = static_cast<int>(args["limit"].get<int64_t>());
  }
  json builds = json::array();
  std::string text;
  for (json& record : builds_.List(statuses, limit)) {
    text += Summary(record) + "\n";
    builds.push_back(std::move(record));
  }
  if (text.empty()) text = "No builds.";
  call->Finish(ToolResult(text, {{"builds", builds}}, false));
}

BuildsResult Tools::CancelAs(const std::string& id, const std::string& message, const Caller& caller) {
  if (!caller.cancels_any) {
    const BuildsResult found = builds_.Get(id);
    if (found.outcome != Outcome::kOk) return found;
    const std::string owner = Str(found.record, "submitted_by");
    if (owner != caller.name) {
      return {Outcome::kForbidden, nullptr,
              "build " + id + " was submitted " + (owner.empty() ? "before users were set up" : "by " + owner) +
                  "; " + caller.name + " may cancel only their own builds, an admin may cancel any"};
    }
  }
  return builds_.Cancel(id, "api", message, caller.name);
}

void Tools::CancelBuild(const json& args, const std::shared_ptr<PendingCall>& call, const Caller& caller) {
  std::string error, id;
  if (UnknownArgument(args, {"id"}, &error) || !BuildId(args, &id, &error)) return call->Finish(ToolError(error));
  BuildsResult r = CancelAs(id, "cancelled by the MCP tool cancel_build", caller);
  if (r.outcome == Outcome::kOk) return call->Finish(ToolResult(Summary(r.record), r.record, false));
  if (r.outcome == Outcome::kAlreadyFinished && r.record.is_object()) {
    return call->Finish(ToolResult(r.error, r.record, true));
  }
  call->Finish(ToolError(r.error + (r.outcome == Outcome::kNotFound ? " (list builds with list_builds)" : "")));
}

}  // namespace trtwatch::mcp
