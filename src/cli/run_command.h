// `trtwatch run [options] -- COMMAND [ARGS...]`: COMMAND, unchanged, with trtwatch
// attached to every TensorRT engine build in it and its children (docs/attach.md).
// A thin layer of flag parsing over runner/attached_run.h.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace trtwatch {

struct RunCommandOptions {
  std::string progress = "auto";
  std::string color = "auto";
  std::string events_file;
  std::string trace_file;
  std::string timeout;
  std::string stall_timeout;
  std::string stall_action = "warn";
  int preload = 0;
  std::string history;  // --history DIR; empty: TRTWATCH_HISTORY, the state folder
  bool no_history = false;  // a TensorRT major version whose attach library is preloaded
  std::vector<std::string> command;
};

CLI::App* AddRunCommand(CLI::App& app, RunCommandOptions* options);
int RunRunCommand(const RunCommandOptions& options);

}  // namespace trtwatch
