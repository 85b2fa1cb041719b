#include "cli/replay_command.h"

#include <cstdio>
#include <memory>

#include "backends/replay/replay_backend.h"
#include "history/build_lookup.h"
#include "history/history_file.h"
#include "runner/history_folder.h"
#include "runner/runner.h"

namespace trtwatch {

namespace {

int ReplayUsageError(const std::string& message) {
  std::fprintf(stderr, "trtwatch replay: %s\n", message.c_str());
  return exit_code::kUsage;
}

// The event log the history keeps of build `id` (docs/history.md), as a stream: its
// lines are the stream's, steps left out.
replay::RecordedStreamRead ReadHistoryBuild(const std::string& id, const std::string& history_flag) {
  const HistoryFolder folder = ChooseHistoryFolder(history_flag, false, ProcessEnvironment());
  if (folder.outcome != HistoryFolder::Outcome::kFolder) {
    return {std::nullopt, folder.outcome == HistoryFolder::Outcome::kOff ? "TRTWATCH_HISTORY is off: give --history DIR"
                                                                         : folder.error};
  }
  const history::HistoryFile file(folder.path, {});
  const history::ReadResult read = file.Read();
  for (const std::string& warning : read.warnings) std::fprintf(stderr, "trtwatch: warning: %s\n", warning.c_str());
  const history::FoundBuild found = history::FindBuild(read.entries, id, file.path());
  if (found.entry == nullptr) return {std::nullopt, found.error};
  std::string lines;
  for (const std::string& event : found.entry->events) lines += event + "\n";
  return replay::ParseRecordedStream(lines, "build " + found.entry->build + " in " + file.path());
}

}  // namespace

CLI::App* AddReplayCommand(CLI::App& app, ReplayCommandOptions* options) {
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "Play a saved build stream (--events FILE.jsonl, a service build's saved events, or a build of the history) "
      "through a view");
  cmd->add_option("file", options->file, "The stream: JSON lines, or Server-Sent Events saved with curl");
  cmd->add_option("--build", options->build,
                  "Instead of a file: a build of the local history, by id (a unique prefix will do; "
                  "`trtwatch history` lists them). Its steps are not kept: the replay shows the phases");
  cmd->add_option("--history", options->history, "The history folder (default: TRTWATCH_HISTORY, the state folder)");
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
  if (options.file.empty() == options.build.empty()) {
    return ReplayUsageError("give the stream to play: a FILE, or --build ID from the history (one of the two)");
  }
  replay::RecordedStreamRead read = options.build.empty() ? replay::ReadRecordedStream(options.file)
                                                          : ReadHistoryBuild(options.build, options.history);
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
