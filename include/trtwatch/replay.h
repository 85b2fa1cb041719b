// Replay: a saved build stream played back through a Watch — its views, event and trace
// files and result see the recorded build again, at its pace, faster, or at once. The
// stream is a file written by `--events` (or `WatchOptions::events_file`), or a service
// build's `GET /builds/{id}/events` saved as Server-Sent Events.
#pragma once

#include <string>

#include <trtwatch/result.h>
#include <trtwatch/watch.h>

namespace trtwatch {

struct ReplayOptions {
  std::string path;      // the saved stream
  double speed = 1.0;    // > 0; 10 plays ten times as fast
  bool instant = false;  // no recorded pauses at all
};

// Plays the stream through `watch` on this thread: build_start names the backend
// "replay" with the original's model and facts plus `replay_of` (its build id), and the
// result concludes as the original did. A cancel of the watch stops the replay at its
// next event. Throws std::invalid_argument before anything is played when the file is
// not one whole build's stream (the message names the line and the fix), or speed <= 0;
// std::logic_error when the watch already ran a build.
BuildResult Replay(Watch& watch, const ReplayOptions& options);

}  // namespace trtwatch
