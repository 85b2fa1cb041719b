#include "cli/run_command.h"

#include <cstdio>

#include "runner/attached_run.h"
#include "runner/duration.h"
#include "runner/history_folder.h"

namespace trtwatch {

namespace {

int RunUsageError(const std::string& message) {
  std::fprintf(stderr, "trtwatch run: %s\n", message.c_str());
  return exit_code::kUsage;
}

}  // namespace

CLI::App* AddRunCommand(CLI::App& app, RunCommandOptions* options) {
  CLI::App* cmd = app.add_subcommand(
      "run", "Run COMMAND unchanged, watching every TensorRT engine build in it and its children (docs/attach.md)");
  cmd->add_option("--progress", options->progress,
                  "auto|tty|plain|quiet (the JSON stream goes to --events, never into COMMAND's output)")
      ->default_val("auto");
  cmd->add_option("--color", options->color, "auto|always|never")->default_val("auto");
  cmd->add_option("--events", options->events_file,
                  "Write each build's event stream (JSON lines) to FILE; {n} in it is the build's number "
                  "(else builds 2, 3, ... write FILE.2, FILE.3)");
  cmd->add_option("--trace", options->trace_file, "Write each build's phase timeline to FILE.json ({n} as for --events)");
  cmd->add_option("--timeout", options->timeout, "Cancel a build still running after this long (exit 124)");
  cmd->add_option("--stall-timeout", options->stall_timeout, "Report a build silent for this long");
  cmd->add_option("--stall-action", options->stall_action, "warn|cancel, as for build")->default_val("warn");
  cmd->add_option("--preload", options->preload,
                  "Also preload the attach library of this TensorRT major version (10, 11): for programs that "
                  "load libnvinfer by absolute path, as the tensorrt wheel does");
  cmd->add_option("--history", options->history,
                  "Keep the builds in the history in DIR (default: TRTWATCH_HISTORY, else the state folder)");
  cmd->add_flag("--no-history", options->no_history, "Neither read nor add to the build history (no ETA)");
  cmd->add_option("command", options->command, "COMMAND and its arguments, after --")->required();
  return cmd;
}

int RunRunCommand(const RunCommandOptions& options) {
  if (options.progress == "json") {
    return RunUsageError("--progress json would mix the stream into COMMAND's output; "
                         "give --events FILE (a file, a FIFO or /dev/fd/N) instead");
  }
  if (options.stall_action != "warn" && options.stall_action != "cancel") {
    return RunUsageError("--stall-action must be warn or cancel (got \"" + options.stall_action + "\")");
  }
  AttachedRunOptions attached;
  RunOptions& run = attached.run;
  run.program = "trtwatch run";
  run.output = OutputFlags{options.progress, options.color};
  run.events_file = options.events_file;
  run.trace_file = options.trace_file;
  run.cancel_on_stall = options.stall_action == "cancel";
  const Status limits = ReadDurationFlags(
      {{"--timeout", options.timeout, &run.timeout}, {"--stall-timeout", options.stall_timeout, &run.stall_timeout}});
  if (!limits.ok()) return RunUsageError(limits.error());
  if (options.preload != 0 && options.preload != 10 && options.preload != 11) {
    return RunUsageError("--preload must be a TensorRT major version trtwatch has an attach library for: 10 or 11");
  }
  attached.preload_major = options.preload;
  const HistoryFolder history = ChooseHistoryFolder(options.history, options.no_history, ProcessEnvironment());
  if (history.outcome == HistoryFolder::Outcome::kUnknown) {
    std::fprintf(stderr, "trtwatch run: warning: no build history: %s\n", history.error.c_str());
  }
  run.history.folder = history.path;
  attached.command = options.command;
  return RunAttached(std::move(attached));
}

}  // namespace trtwatch
