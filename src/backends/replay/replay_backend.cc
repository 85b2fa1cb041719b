#include "backends/replay/replay_backend.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

namespace trtwatch::replay {

namespace {

// How often a wait through a silent stretch looks for a cancel of the replay.
constexpr int64_t kCancelPollNs = 50'000'000;

const Event& Start(const RecordedStream& stream) { return stream.events.front(); }
const Event& Finish(const RecordedStream& stream) { return stream.events.back(); }

}  // namespace

ReplayBackend::ReplayBackend(RecordedStream stream, ReplayOptions options)
    : stream_(std::move(stream)), options_(options) {}

BuildInfo ReplayBackend::Describe() const {
  const Event& start = Start(stream_);
  BuildInfo info;
  info.backend = "replay";
  info.model = start.model;
  info.facts = start.facts;
  info.facts.emplace_back("replay_of", start.build);
  info.facts.emplace_back("replay_of_backend", start.backend);
  return info;
}

bool ReplayBackend::WaitFor(const Event& event, Monitor& monitor, int64_t start_ns) const {
  if (options_.instant) return true;
  const int64_t due_ns = start_ns + static_cast<int64_t>(event.t / options_.speed * 1e9);
  for (;;) {
    // A cancel the original recorded is being replayed; only another one stops us.
    if (monitor.IsCancelRequested() && !recorded_cancel_) return false;
    const int64_t left_ns = due_ns - monitor.clock().NowNs();
    if (left_ns <= 0) return true;
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(left_ns, kCancelPollNs)));
  }
}

bool ReplayBackend::Play(const Event& e, Monitor& monitor) {
  switch (e.type) {
    case EventType::kPhaseStart: {
      phase_names_[e.id] = e.phase;
      const auto parent = phase_names_.find(e.parent);
      monitor.phaseStart(e.phase.c_str(), parent == phase_names_.end() ? nullptr : parent->second.c_str(), e.total);
      return true;
    }
    case EventType::kStep:
      // Refused steps are the original's too once it recorded a cancel.
      return monitor.stepComplete(e.phase.c_str(), e.step) || recorded_cancel_;
    case EventType::kPhaseFinish:
      monitor.phaseFinish(e.phase.c_str());
      return true;
    case EventType::kCancelRequested:
      // A replay cancelled first keeps its own reason; the original's cancel then is moot.
      recorded_cancel_ = monitor.RequestCancel(e.reason, e.message);
      return recorded_cancel_;
    case EventType::kStall:
      monitor.ReportStall(e.silent_for);
      return true;
    case EventType::kLog:
      monitor.Log(e.severity, e.message);
      return true;
    case EventType::kEstimate:
      // The original's ETA, as it was shown then.
      monitor.ReportEstimate(e.estimate);
      return true;
    case EventType::kBuildStart:
    case EventType::kBuildFinish:
      return true;
  }
  return true;
}

BuildOutcome ReplayBackend::Build(Monitor& monitor) {
  phase_names_.clear();
  recorded_cancel_ = false;
  const int64_t start_ns = monitor.clock().NowNs();
  for (size_t i = 1; i + 1 < stream_.events.size(); ++i) {
    const Event& event = stream_.events[i];
    if (!WaitFor(event, monitor, start_ns) || !Play(event, monitor)) return BuildOutcome{false, ""};
  }
  const Event& finish = Finish(stream_);
  if (!WaitFor(finish, monitor, start_ns)) return BuildOutcome{false, ""};
  return BuildOutcome{finish.status == BuildStatus::kSucceeded, finish.error};
}

}  // namespace trtwatch::replay
