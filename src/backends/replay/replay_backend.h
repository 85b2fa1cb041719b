// ReplayBackend: plays a recorded build (replay/recorded_stream.h) back through a Monitor,
// so that every view, the event and trace files and the result see it as they saw the
// original: the same phases under the same parents, steps, logs, stalls, the cancel
// request and the outcome. build_start names the backend "replay" and keeps the
// original's model and facts, with `replay_of` (the original build's id); the replay
// gets a build id of its own.
//
// Pacing: each event is played at its recorded time divided by `speed`, or at once
// with `instant`. A cancel of the replay itself (Ctrl+C, --timeout) stops it at the next
// event, even in the middle of a long silent stretch; a cancel the original recorded is
// replayed as one.
//
// Threading: Build runs on the caller's thread.
#pragma once

#include <map>
#include <string>

#include "backends/backend.h"
#include "backends/replay/recorded_stream.h"

namespace trtwatch::replay {

struct ReplayOptions {
  double speed = 1.0;    // > 0; 10 plays ten times as fast
  bool instant = false;  // no waiting at all
};

class ReplayBackend final : public Backend {
 public:
  ReplayBackend(RecordedStream stream, ReplayOptions options);

  BuildInfo Describe() const override;
  BuildOutcome Build(Monitor& monitor) override;

 private:
  // Waits until the event's recorded time; false when the replay was cancelled meanwhile.
  bool WaitFor(const Event& event, Monitor& monitor, int64_t start_ns) const;
  // Plays one event; false when the replay itself was cancelled.
  bool Play(const Event& event, Monitor& monitor);

  const RecordedStream stream_;
  const ReplayOptions options_;
  std::map<int64_t, std::string> phase_names_;  // phase id -> name, for parents
  bool recorded_cancel_ = false;                // the original was asked to cancel
};

}  // namespace trtwatch::replay
