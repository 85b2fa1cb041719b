#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "mcp/manager_builds.h"

#include <cstdint>
#include <limits>

#include "service/build_manager.h"
#include "service/build_record.h"
#include "service/record_store.h"

namespace trtwatch::mcp {

namespace {

using nlohmann::json;

json Parse(const std::string& text) { return json::parse(text, nullptr, /*allow_exceptions=*/false); }

// The manager's outcomes as the tools see them.
Outcome ToOutcome(service::SubmitOutcome outcome) {
  switch (outcome) {
    case service::SubmitOutcome::kCreated:
      return Outcome::kOk;
    case service::SubmitOutcome::kInvalid:
      return Outcome::kBadRequest;
    case service::SubmitOutcome::kQueueFull:
    case service::SubmitOutcome::kShuttingDown:
      return Outcome::kBusy;
    case service::SubmitOutcome::kStorageFailed:
      break;
  }
  return Outcome::kStorageError;
}

Outcome ToOutcome(service::GetOutcome outcome) {
  return outcome == service::GetOutcome::kFound ? Outcome::kOk : Outcome::kNotFound;
}

Outcome ToOutcome(service::CancelOutcome outcome) {
  switch (outcome) {
    case service::CancelOutcome::kCancelled:
    case service::CancelOutcome::kCancelling:
      return Outcome::kOk;
    case service::CancelOutcome::kInvalid:
      return Outcome::kBadRequest;
    case service::CancelOutcome::kNotFound:
      return Outcome::kNotFound;
    case service::CancelOutcome::kAlreadyFinished:
      break;
  }
  return Outcome::kAlreadyFinished;
}

template <typename ManagerOutcome>
BuildsResult FromManager(const service::ManagerResult<ManagerOutcome>& r) {
  BuildsResult out;
  out.outcome = ToOutcome(r.outcome);
  if (!r.record.empty()) out.record = Parse(r.record);
  out.error = r.error;
  return out;
}

class ManagerWatch final : public BuildWatch, public service::EventSubscriber {
 public:
  ManagerWatch(service::BuildManager& manager, std::string id, std::function<void()> on_event,
               std::function<void()> on_end)
      : manager_(manager), id_(std::move(id)), on_event_(std::move(on_event)), on_end_(std::move(on_end)) {}
  ~ManagerWatch() override { manager_.Unsubscribe(id_, this); }

  void OnEvent(const service::SseItem&) override {
    const std::function<void()> f = on_event_;  // the callback may destroy this watch
    f();
  }
  void OnEnd() override {
    const std::function<void()> f = on_end_;
    f();
  }

 private:
  service::BuildManager& manager_;
  const std::string id_;
  const std::function<void()> on_event_;
  const std::function<void()> on_end_;
};

}  // namespace

BuildsResult ManagerBuilds::Submit(const json& request) { return FromManager(manager_.Submit(request.dump())); }

BuildsResult ManagerBuilds::Get(const std::string& id) { return FromManager(manager_.Get(id)); }

BuildsResult ManagerBuilds::Cancel(const std::string& id, const std::string& reason, const std::string& message) {
  return FromManager(manager_.CancelFor(id, reason, message));  // finished already: with the final record
}

std::vector<json> ManagerBuilds::List(const std::vector<std::string>& statuses, int limit) {
  std::vector<json> out;
  for (const std::string& doc : store_.List(statuses, limit, 0).docs) {
    json record = Parse(doc);
    if (!record.is_object()) continue;
    service::BuildState state;
    // Live builds are answered from memory: the stored document lags their progress.
    if (record.contains("status") && record["status"].is_string() &&
        service::ParseBuildState(record["status"].get<std::string>(), &state) && !service::IsFinal(state) &&
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
  const service::BuildManager::Subscription s = manager_.Subscribe(id, watch.get());
  if (!s.live) return nullptr;
  return watch;
}

}  // namespace trtwatch::mcp
