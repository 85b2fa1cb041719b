// PhaseTree: the live tree of a build, rebuilt from its event stream.
//
// Renderers (terminal, dashboard, service records) are projections of the stream, so
// they keep a PhaseTree fed with the events they receive and draw from immutable
// snapshots. Threading: a PhaseTree belongs to one thread (the one applying events);
// a Snapshot is immutable and may be shared with any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/event.h"

namespace trtwatch {

struct PhaseNode {
  int64_t id = kNoPhase;
  int64_t parent = kNoPhase;
  std::string name;
  int depth = 0;
  int32_t total = 0;
  int32_t done = 0;  // steps reported complete (step + 1)
  double started_at = 0;
};

struct TreeSnapshot {
  std::string build;
  std::string backend;
  std::string model;
  Facts facts;
  double last_event_t = 0;     // t of the latest event applied
  double last_progress_t = 0;  // t of the latest phase/step event
  std::vector<PhaseNode> active;  // depth-first: every parent before its children
  int64_t phases_started = 0;
  int64_t phases_finished = 0;
  std::optional<CancelReason> cancel_reason;
  std::string cancel_message;
  double cancel_requested_at = 0;
  std::optional<double> stalled_for;  // set by a stall event, cleared by progress
  std::optional<Estimate> estimate;   // the latest estimate event's
  double estimate_t = 0;              // ...and when it came, to count down from
  bool finished = false;
  BuildStatus status = BuildStatus::kFailed;
  std::string error;
  std::vector<std::string> last_errors;  // latest error-severity log lines
};

class PhaseTree {
 public:
  void Apply(const Event& event);
  std::shared_ptr<const TreeSnapshot> Snapshot() const;
  const TreeSnapshot& current() const { return state_; }
  // The active phase with this id, or nullptr. Valid until the next Apply.
  const PhaseNode* Find(int64_t id) const;

 private:
  TreeSnapshot state_;                  // `active` kept unordered here, ordered on Snapshot
  std::map<int64_t, size_t> index_;     // active id -> position in state_.active
  void Remove(int64_t id);
};

}  // namespace trtwatch
