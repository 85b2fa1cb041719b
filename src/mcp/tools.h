// Tools: the MCP tools of trtwatch (build_engine, get_build, list_builds, cancel_build,
// doctor), their input and output JSON Schemas, and the calls in flight.
//
// A build_engine call that waits samples its build's record every kTick and sends
// progress notifications from the event loop (never from a builder thread: builds run
// in worker processes). A call cancelled by the client (notifications/cancelled)
// cancels its build through the build manager: SIGTERM to the worker, which cancels
// cooperatively exactly as on Ctrl+C. Budgets (the call's `timeout`, the server's
// maximum build time) cancel with reason "budget".
//
// Threading: everything on the thread that runs `io`.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mcp/builds.h"
#include "mcp/progress.h"

namespace boost::asio {
class io_context;
}

namespace trtwatch::mcp {

using nlohmann::json;

// One tools/call between its request and its response.
class PendingCall {
 public:
  // `send_progress` is null when the request carried no progress token.
  PendingCall(std::function<void(const ProgressReport&)> send_progress, std::function<void(json)> send_result)
      : send_progress_(std::move(send_progress)), send_result_(std::move(send_result)) {}

  bool wants_progress() const { return send_progress_ != nullptr && !over_; }
  void Progress(const ProgressReport& report) {
    if (wants_progress()) send_progress_(report);
  }
  // Sends the CallToolResult; only the first of Finish and Cancel counts.
  void Finish(json result) {
    if (over_) return;
    over_ = true;
    send_result_(std::move(result));
  }
  // The client cancelled the request: no response is sent; the tool's cancel runs.
  void Cancel(const std::string& reason) {
    if (over_) return;
    over_ = true;
    if (on_cancel_) std::exchange(on_cancel_, nullptr)(reason);
  }
  void set_on_cancel(std::function<void(const std::string&)> f) { on_cancel_ = std::move(f); }
  bool over() const { return over_; }

 private:
  std::function<void(const ProgressReport&)> send_progress_;
  std::function<void(json)> send_result_;
  std::function<void(const std::string&)> on_cancel_;
  bool over_ = false;
};

struct ToolOptions {
  double max_build_seconds = 0;           // the server-wide budget; 0 = none
  std::function<json()> doctor;           // what `trtwatch doctor --json` reports
  std::chrono::milliseconds tick{500};    // progress sampling: at most 2 notifications a second
};

class Tools {
 public:
  Tools(boost::asio::io_context& io, Builds& builds, ToolOptions options);
  ~Tools();
  Tools(const Tools&) = delete;
  Tools& operator=(const Tools&) = delete;

  // The tools/list result's `tools`.
  json List() const;
  bool Has(const std::string& name) const;
  // Runs tool `name` (Has(name) must hold); the result goes to `call` now or later.
  void Call(const std::string& name, const json& arguments, const std::shared_ptr<PendingCall>& call,
            const Caller& caller);
  // build_engine's start without its wait (a task-augmented call): validates `args`,
  // submits the build and starts its budget. The queued record, or null with the
  // error for the agent. `*wait` receives the call's "wait" argument.
  std::optional<json> SubmitBuild(const json& args, const Caller& caller, bool* wait, std::string* error);
  // Cancels build `id` as `caller` asked (reason "api", `message`): kForbidden when it
  // is another's and the caller may not cancel any (the service's ownership rule).
  BuildsResult CancelAs(const std::string& id, const std::string& message, const Caller& caller);
  // Finishes `call` with build `id`'s CallToolResult once the build is over (at once
  // if it is). Cancelling `call` stops the wait, not the build.
  void WaitForEnd(const std::string& id, const std::shared_ptr<PendingCall>& call);
  Builds& builds() { return builds_; }
  // Cancels the builds this server started that still wait in the queue (`message`
  // says why): a stdio server that stops will not run them.
  void CancelQueued(const std::string& message);
  // Drops the waits and budget timers: the server is stopping. Call it before the
  // build manager goes.
  void Stop();

 private:
  struct Waiter;
  struct Budget;

  void BuildEngine(const json& args, const std::shared_ptr<PendingCall>& call, const Caller& caller);
  // build_engine with "targets": the group's builds started, the call answered at once.
  json SubmitGroup(const json& args, const Caller& caller);
  void GetBuild(const json& args, const std::shared_ptr<PendingCall>& call);
  void ListBuilds(const json& args, const std::shared_ptr<PendingCall>& call);
  void CancelBuild(const json& args, const std::shared_ptr<PendingCall>& call, const Caller& caller);
  void StartBudget(const std::string& id, double seconds, const std::string& source);
  // Progress while build `id` runs, then its result; `cancel_build_with_call`: the
  // client's cancel of `call` cancels the build too (a plain build_engine call).
  // `by`: who submitted it with `call` (its cancel's cancelled_by).
  void Wait(const std::string& id, const std::shared_ptr<PendingCall>& call, bool cancel_build_with_call,
            const std::string& by = {});
  void Tick(uint64_t waiter);
  void EndWait(uint64_t waiter);

  boost::asio::io_context& io_;
  Builds& builds_;
  const ToolOptions options_;
  std::map<uint64_t, std::unique_ptr<Waiter>> waiters_;  // build_engine calls that wait
  std::map<std::string, std::unique_ptr<Budget>> budgets_;  // build id -> its budget
  std::vector<std::string> started_;  // ids of the builds submitted here
  uint64_t next_waiter_ = 1;
};

// A CallToolResult: `text` for people and models, `record` as structuredContent (and
// as JSON text, for clients of revisions without structured content).
json ToolResult(const std::string& text, const json& structured, bool is_error);
json ToolError(const std::string& text);

// A build record's facts: whether its status is final, a string field ("" when
// absent), one line an agent can act on ("Build b_... (simulated small-cnn): running,
// Timing graph nodes 47/83 › Building engine 2/6.").
bool IsFinalStatus(const std::string& status);
std::string Str(const json& record, const char* key);
std::string Summary(const json& record);

}  // namespace trtwatch::mcp
