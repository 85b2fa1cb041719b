#include "history/build_recorder.h"

#include "history/phase_family.h"
#include "protocol/event_json.h"
#include "protocol/utf8.h"

namespace trtwatch::history {

namespace {

constexpr size_t kMaxEventBytes = 4096;  // a longer log line is left out of the kept log

}  // namespace

void BuildRecorder::OnEvent(const Event& event) {
  MutexLock lock(&mu_);
  switch (event.type) {
    case EventType::kBuildStart:
      build_ = event.build;
      backend_ = event.backend;
      model_ = event.model;
      break;
    case EventType::kPhaseStart: {
      auto parent = depth_.find(event.parent);
      const int depth = parent == depth_.end() ? 0 : parent->second + 1;
      depth_[event.id] = depth;
      if (depth <= kSequenceDepth && live_.size() < kMaxSequence) {
        open_[event.id] = live_.size();
        live_.push_back(LivePhase{PhaseFamily(event.phase), depth, event.t, std::nullopt, event.total});
        if (depth <= kTopLevelDepth) ++top_level_changes_;
      }
      break;
    }
    case EventType::kPhaseFinish: {
      depth_.erase(event.id);
      auto open = open_.find(event.id);
      if (open != open_.end()) {
        LivePhase& phase = live_[open->second];
        phase.end = event.t;
        if (phase.depth <= kTopLevelDepth) ++top_level_changes_;
        open_.erase(open);
      }
      break;
    }
    default:
      break;
  }
  if (event.type == EventType::kStep) return;  // steps would crowd out everything else
  std::string line = EventToJson(event);
  if (event.type == EventType::kBuildFinish) {
    finish_ = std::move(line);
  } else if (events_.size() + 1 < kMaxEventsKept && line.size() <= kMaxEventBytes) {
    events_.push_back(std::move(line));
  }
}

std::vector<LivePhase> BuildRecorder::Live() const {
  MutexLock lock(&mu_);
  return live_;
}

size_t BuildRecorder::TopLevelChanges() const {
  MutexLock lock(&mu_);
  return top_level_changes_;
}

HistoryEntry BuildRecorder::Entry(const BuildResult& result) const {
  MutexLock lock(&mu_);
  HistoryEntry entry;
  entry.build = build_;
  entry.backend = backend_;
  entry.model = model_;
  entry.elapsed = result.elapsed;
  entry.status = result.status;
  entry.error = ValidBoundedText(result.error, kMaxTextBytes);
  entry.families = FamiliesOf(result.phases);
  for (const LivePhase& phase : live_) {
    entry.sequence.push_back(
        PhaseSpan{phase.family, phase.depth, phase.start, phase.end.value_or(result.elapsed), phase.steps});
  }
  entry.events = events_;
  if (!finish_.empty()) entry.events.push_back(finish_);
  return entry;
}

}  // namespace trtwatch::history
