// Replay (include/trtwatch/replay.h): the replay backend driven through a Watch.
#include <trtwatch/replay.h>

#include <stdexcept>

#include "backends/replay/replay_backend.h"
#include "core/build_session.h"

namespace trtwatch {

BuildResult Replay(Watch& watch, const ReplayOptions& options) {
  if (!(options.speed > 0)) {
    throw std::invalid_argument("trtwatch::Replay: speed must be greater than zero (1 is the recorded pace)");
  }
  replay::RecordedStreamRead read = replay::ReadRecordedStream(options.path);
  if (!read.stream) throw std::invalid_argument("trtwatch::Replay: " + read.error);
  replay::ReplayBackend backend(std::move(*read.stream), replay::ReplayOptions{options.speed, options.instant});
  const BuildInfo info = backend.Describe();
  watch.Describe(info.backend, info.model, info.facts);
  watch.Start();
  const BuildOutcome outcome = CallBuild([&] { return backend.Build(*watch.monitor_); });
  return watch.Finish(outcome.engine_built, outcome.error);
}

}  // namespace trtwatch
