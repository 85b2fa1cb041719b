#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "mcp/manager_builds.h"

#include "protocol/json_body.h"

#include <cstdint>
#include <limits>

#include "builds/audit_log.h"
#include "builds/build_groups.h"
#include "builds/build_manager.h"
#include "builds/build_record.h"
#include "builds/stores/record_store.h"

namespace trtwatch::mcp {

namespace {

using nlohmann::json;

json Parse(const std::string& text) { return json::parse(text, nullptr, /*allow_exceptions=*/false); }

// The manager's outcomes as the tools see them.
Outcome ToOutcome(builds::SubmitOutcome outcome) {
  switch (outcome) {
    case builds::SubmitOutcome::kCreated:
      return Outcome::kOk;
    case builds::SubmitOutcome::kInvalid:
      return Outcome::kBadRequest;
    case builds::SubmitOutcome::kQueueFull:
    case builds::SubmitOutcome::kShuttingDown:
      return Outcome::kBusy;
    case builds::SubmitOutcome::kStorageFailed:
      break;
  }
  return Outcome::kStorageError;
}

Outcome ToOutcome(builds::GetOutcome outcome) {
  return outcome == builds::GetOutcome::kFound ? Outcome::kOk : Outcome::kNotFound;
}

Outcome ToOutcome(builds::CancelOutcome outcome) {
  switch (outcome) {
    case builds::CancelOutcome::kCancelled:
    case builds::CancelOutcome::kCancelling:
      return Outcome::kOk;
    case builds::CancelOutcome::kInvalid:
      return Outcome::kBadRequest;
    case builds::CancelOutcome::kNotFound:
      return Outcome::kNotFound;
    case builds::CancelOutcome::kUnavailable:
      return Outcome::kStorageError;
    case builds::CancelOutcome::kAlreadyFinished:
      break;
  }
  return Outcome::kAlreadyFinished;
}

Outcome ToOutcome(builds::GroupOutcome outcome) {
  switch (outcome) {
    case builds::GroupOutcome::kCreated:
    case builds::GroupOutcome::kFound:
    case builds::GroupOutcome::kCancelling:
      return Outcome::kOk;
    case builds::GroupOutcome::kInvalid:
      return Outcome::kBadRequest;
    case builds::GroupOutcome::kNotFound:
      return Outcome::kNotFound;
    case builds::GroupOutcome::kQueueFull:
    case builds::GroupOutcome::kShuttingDown:
    case builds::GroupOutcome::kNotYet:
      return Outcome::kBusy;
    case builds::GroupOutcome::kStorageFailed:
    case builds::GroupOutcome::kUnavailable:
      break;
  }
  return Outcome::kStorageError;
}

template <typename ManagerOutcome>
BuildsResult FromManager(const builds::ManagerResult<ManagerOutcome>& r) {
  BuildsResult out;
  out.outcome = ToOutcome(r.outcome);
  if (!r.record.empty()) out.record = Parse(r.record);
  out.error = r.error;
  return out;
}

class ManagerWatch final : public BuildWatch, public builds::EventSubscriber {
 public:
  ManagerWatch(builds::BuildManager& manager, std::string id, std::function<void()> on_event,
               std::function<void()> on_end)
      : manager_(manager), id_(std::move(id)), on_event_(std::move(on_event)), on_end_(std::move(on_end)) {}
  ~ManagerWatch() override { manager_.Unsubscribe(id_, this); }

  void OnEvent(const builds::FramedEvent&) override {
    const std::function<void()> f = on_event_;  // the callback may destroy this watch
    f();
  }
  void OnEnd() override {
    const std::function<void()> f = on_end_;
    f();
  }

 private:
  builds::BuildManager& manager_;
  const std::string id_;
  const std::function<void()> on_event_;
  const std::function<void()> on_end_;
};

}  // namespace

// The tool's arguments were read once, with the JSON-RPC message (protocol/json_body.h).
BuildsResult ManagerBuilds::Submit(const json& request, const Caller& caller) {
  Result<builds::BuildRequest> parsed = manager_.Parse(JsonBody{JsonBody::Outcome::kOk, request, ""});
  if (!parsed.ok()) return FromManager(builds::Refusal(builds::SubmitOutcome::kInvalid, parsed.error()));
  parsed.value().submitted_by = caller.name;
  const builds::SubmitResult r = manager_.Submit(std::move(parsed).value());
  if (r.outcome == builds::SubmitOutcome::kCreated) (void)audit_.RecordSubmit(caller.name, false, r.id, r.record);
  return FromManager(r);
}

BuildsResult ManagerBuilds::SubmitGroup(const json& request, const Caller& caller) {
  const builds::GroupResult r = manager_.groups().Submit(JsonBody{JsonBody::Outcome::kOk, request, ""}, caller.name);
  if (r.outcome == builds::GroupOutcome::kCreated) (void)audit_.RecordSubmit(caller.name, true, r.id, r.record);
  return FromManager(r);
}

BuildsResult ManagerBuilds::Get(const std::string& id) { return FromManager(manager_.Get(id)); }

BuildsResult ManagerBuilds::Cancel(const std::string& id, const std::string& reason, const std::string& message,
                                   const std::string& by) {
  // Finished already: with the final record.
  const builds::CancelResult r = manager_.CancelFor(id, reason, message, std::nullopt, by);
  const bool took = r.outcome == builds::CancelOutcome::kCancelled || r.outcome == builds::CancelOutcome::kCancelling;
  if (took && reason == "api") (void)audit_.RecordCancel(by, id, r.record);  // a person's, not the budget's
  return FromManager(r);
}

std::vector<json> ManagerBuilds::List(const std::vector<std::string>& statuses, int limit) {
  std::vector<json> out;
  const Result<builds::RecordStore::Page> page = store_.List(statuses, limit, 0);
  if (!page.ok()) return out;  // an unreadable store lists no builds
  for (const std::string& doc : page->docs) {
    json record = Parse(doc);
    if (!record.is_object()) continue;
    builds::BuildState state;
    // Live builds are answered from memory: the stored document lags their progress.
    if (record.contains("status") && record["status"].is_string() &&
        builds::ParseBuildState(record["status"].get<std::string>(), &state) && !builds::IsFinal(state) &&
        record.contains("id") && record["id"].is_string()) {
      BuildsResult live = Get(record["id"].get<std::string>());
      if (live.outcome == Outcome::kOk) record = std::move(live.record);
    }
    out.push_back(std::move(record));
  }
  return out;
}

std::unique_ptr<BuildWatch> ManagerBuilds::Watch(const std::string& id, std::function<void()> on_event,
                                                 std::function<void()> on_end) {
  auto watch = std::make_unique<ManagerWatch>(manager_, id, std::move(on_event), std::move(on_end));
  // What follows the log's current end: the caller reads the record for the rest.
  const builds::BuildManager::Subscription s = manager_.Subscribe(id, watch.get());
  if (!s.live) return nullptr;
  return watch;
}

}  // namespace trtwatch::mcp
