// `trtwatch replay EVENTS.jsonl`: a saved build stream played back through any view
// (backends/replay/replay_backend.h), at its recorded pace, faster, or at once.
// `trtwatch replay --build ID` plays a build of the local history instead, from the
// event log its entry keeps (steps are not kept: the replay shows the phases).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace trtwatch {

struct ReplayCommandOptions {
  std::string file;
  std::string build;    // --build ID: a build of the history (a unique prefix will do)
  std::string history;  // --history DIR; empty: TRTWATCH_HISTORY, the state folder
  double speed = 1.0;
  bool instant = false;
  std::string progress = "auto";
  std::string color = "auto";
  std::string events_file;
  std::string trace_file;
};

CLI::App* AddReplayCommand(CLI::App& app, ReplayCommandOptions* options);
// Exit 2 with the line and the fix for a file that is not one whole build's stream;
// otherwise the exit code the original build's outcome maps to (0 succeeded, 1 failed,
// 124 timed out, 130 cancelled), or 130 when the replay itself is interrupted.
int RunReplayCommand(const ReplayCommandOptions& options);

}  // namespace trtwatch
