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

std::string ErrorText(const json& body, const std::string& fallback) {
  return body.is_object() && body.contains("error") && body["error"].is_string() ? body["error"].get<std::string>()
                                                                                 : fallback;
}

// The manager answers in HTTP terms; the tools want outcomes.
BuildsResult FromApi(const service::ApiResult& r) {
  BuildsResult out;
  const json body = Parse(r.body);
  switch (r.status) {
    case 200:
    case 201:
    case 202:
      out.outcome = Outcome::kOk;
      out.record = body;
      return out;
    case 400:
      out.outcome = Outcome::kBadRequest;
      break;
    case 404:
      out.outcome = Outcome::kNotFound;
      break;
    case 409:
      out.outcome = Outcome::kAlreadyFinished;
      break;
    case 429:
    case 503:
      out.outcome = Outcome::kBusy;
      break;
    default:
      out.outcome = Outcome::kStorageError;
      break;
  }
  out.error = ErrorText(body, "the build service answered " + std::to_string(r.status));
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

BuildsResult ManagerBuilds::Submit(const json& request) { return FromApi(manager_.Submit(request.dump())); }

BuildsResult ManagerBuilds::Get(const std::string& id) { return FromApi(manager_.Get(id)); }

BuildsResult ManagerBuilds::Cancel(const std::string& id, const std::string& reason, const std::string& message) {
  BuildsResult r = FromApi(manager_.CancelFor(id, reason, message));
  if (r.outcome == Outcome::kAlreadyFinished) r.record = Get(id).record;
  return r;
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
