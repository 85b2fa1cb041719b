#include "cli/replay_command.h"

#include <cstdio>
#include <memory>

#include "backends/replay/replay_backend.h"
#include "runner/runner.h"

namespace trtwatch {

namespace {

int ReplayUsageError(const std::string& message) {
  std::fprintf(stderr, "trtwatch replay: %s\n", message.c_str());
  return exit_code::kUsage;
}

}  // namespace

CLI::App* AddReplayCommand(CLI::App& app, ReplayCommandOptions* options) {
  CLI::App* cmd = app.add_subcommand(
      "replay", "Play a saved build stream (--events FILE.jsonl, or a service build's saved events) through a view");
  cmd->add_option("file", options->file, "The stream: JSON lines, or Server-Sent Events saved with curl")->required();
  cmd->add_option("--speed", options->speed, "Time scale (10 = ten times as fast)")->default_val(1.0);
  cmd->add_flag("--instant", options->instant, "Play everything at once, without the recorded pauses");
  cmd->add_option("--progress", options->progress, "auto|tty|plain|json|quiet, as for build")->default_val("auto");
  cmd->add_option("--color", options->color, "auto|always|never")->default_val("auto");
  cmd->add_option("--events", options->events_file, "Also write the replayed stream (JSON lines) to FILE");
  cmd->add_option("--trace", options->trace_file, "Write the replayed phase timeline to FILE.json");
  return cmd;
}

int RunReplayCommand(const ReplayCommandOptions& options) {
  if (!(options.speed > 0)) return ReplayUsageError("--speed must be greater than zero");
  if (options.instant && options.speed != 1.0) return ReplayUsageError("give either --speed or --instant, not both");
  replay::RecordedStreamRead read = replay::ReadRecordedStream(options.file);
  if (!read.stream) return ReplayUsageError(read.error);

  RunOptions run;
  run.program = "trtwatch replay";
  run.output = OutputFlags{options.progress, options.color};
  run.events_file = options.events_file;
  run.trace_file = options.trace_file;
  std::string error;
  std::unique_ptr<Runner> runner = Runner::Create(std::move(run), &error);
  if (!runner) return ReplayUsageError(error);
  replay::ReplayBackend backend(std::move(*read.stream), replay::ReplayOptions{options.speed, options.instant});
  return runner->Run(backend.Describe(), [&](Monitor& monitor) { return backend.Build(monitor); }).exit_code;
}

}  // namespace trtwatch
