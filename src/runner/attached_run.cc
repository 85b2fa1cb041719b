#include "runner/attached_run.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "platform/attach_channel.h"
#include "platform/attach_receiver.h"
#include "platform/command_process.h"
#include "platform/signal_watch.h"
#include "runner/attached_builds.h"

namespace trtwatch {

namespace {

constexpr int kPollMs = 50;

std::string AttachFolder(const std::string& given) {
  std::string folder = given;
  if (const char* env = std::getenv("TRTWATCH_ATTACH_DIR"); folder.empty() && env != nullptr && *env != '\0') {
    folder = env;
  }
  if (folder.empty()) folder = (std::filesystem::path(CurrentExecutablePath()).parent_path() / "attach").string();
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::path(folder) / "libnvinfer.so.10", error)) {
    std::fprintf(stderr,
                 "trtwatch run: warning: no attach libraries in %s (libnvinfer.so.N); COMMAND's builds will not be "
                 "watched. Set TRTWATCH_ATTACH_DIR to the folder that holds them\n",
                 folder.c_str());
  }
  return folder;
}

// COMMAND's environment: trtwatch's, with the attach folder first on the library path.
std::vector<std::string> CommandEnvironment(const std::string& folder, int channel_fd, int preload_major) {
  std::vector<std::string> env;
  std::string library_path;
  std::string preload;
  for (const std::string& entry : CurrentEnvironment()) {
    if (entry.rfind("LD_LIBRARY_PATH=", 0) == 0) {
      library_path = entry.substr(16);
    } else if (entry.rfind("LD_PRELOAD=", 0) == 0) {
      preload = entry.substr(11);
    } else if (entry.rfind("TRTWATCH_ATTACH_", 0) != 0 && entry.rfind(kAttachLibraryPathVariable, 0) != 0) {
      env.push_back(entry);
    }
  }
  env.push_back("LD_LIBRARY_PATH=" + folder + (library_path.empty() ? "" : ":" + library_path));
  if (preload_major != 0) {
    preload = folder + "/libnvinfer.so." + std::to_string(preload_major) + (preload.empty() ? "" : ":" + preload);
  }
  if (!preload.empty()) env.push_back("LD_PRELOAD=" + preload);
  env.push_back(std::string(kAttachLibraryPathVariable) + "=" + library_path);
  env.push_back(std::string(kAttachFdVariable) + "=" + std::to_string(channel_fd));
  env.push_back(std::string(kAttachTokenVariable) + "=" + std::to_string(CurrentProcessId()));
  return env;
}

// What an attached build is remembered by in the history (for the ETA): the command
// line, the build call, its place among the run's builds and TensorRT's version. Not
// what the engine depends on (the network is not seen yet): never used by the engine
// cache (docs/attach.md).
keys::RecipeOutcome HistoryRecipe(const std::vector<std::string>& command, int number, const Event& start) {
  keys::KeyRecipe recipe;
  std::string line;
  for (const std::string& arg : command) line += (line.empty() ? "" : " ") + arg;
  recipe.parts = {{"backend", "tensorrt-attached"}, {"attach.command", line}, {"attach.call", start.model},
                  {"attach.number", std::to_string(number)}};
  for (const auto& [name, value] : start.facts) {
    if (name == "tensorrt") recipe.parts.push_back({"tensorrt.runtime", value});
  }
  return {recipe, {}};
}

RunOptions OptionsOfBuild(const AttachedRunOptions& attached, int number, const Event& start) {
  const RunOptions& base = attached.run;
  RunOptions options = base;
  if (!base.history.folder.empty()) options.key_recipe = HistoryRecipe(attached.command, number, start);
  options.events_file = NumberedFile(base.events_file, number);
  options.trace_file = NumberedFile(base.trace_file, number);
  options.handle_signals = false;  // the run's own watch decides what Ctrl+C does
  return options;
}

// Checks the options once, before COMMAND starts.
bool CheckOptions(const RunOptions& base, std::string* error) {
  RunOptions probe = base;
  probe.events_file.clear();
  probe.trace_file.clear();
  probe.handle_signals = false;
  probe.history.folder.clear();
  return Runner::Create(std::move(probe), error) != nullptr;
}

// Ctrl+C (or SIGTERM): the first cancels the builds in progress at their next step; a
// later one, or the first when no build runs, interrupts COMMAND.
void HandleInterrupt(bool first, AttachedBuilds& builds, CommandProcess& command) {
  if (!first || !builds.CancelAll(CancelReason::kSignal, "Ctrl+C",
                                  "trtwatch run: cancelling the build at its next step (Ctrl+C again interrupts "
                                  "COMMAND)")) {
    command.Interrupt();
  }
}

// COMMAND ended: builds still open end failed, saying how; the run's exit code.
int Conclude(const CommandExit& ended, const std::string& name, AttachedBuilds& builds) {
  const std::string how =
      ended.signal ? "was killed by " + ended.signal_name : "exited with " + std::to_string(ended.code);
  builds.EndAll("the program ended during the build (it " + how + ")");
  if (ended.signal) std::fprintf(stderr, "trtwatch run: %s %s\n", name.c_str(), how.c_str());
  return builds.ExitCodeOverride().value_or(ended.code);
}

}  // namespace

std::string NumberedFile(const std::string& pattern, int number) {
  if (pattern.empty()) return pattern;
  if (const size_t at = pattern.find("{n}"); at != std::string::npos) {
    return pattern.substr(0, at) + std::to_string(number) + pattern.substr(at + 3);
  }
  return number == 1 ? pattern : pattern + "." + std::to_string(number);
}

int RunAttached(AttachedRunOptions options) {
  std::string error;
  if (options.command.empty()) error = "give the COMMAND to run after --";
  if (!error.empty() || !CheckOptions(options.run, &error)) {
    std::fprintf(stderr, "trtwatch run: %s\n", error.c_str());
    return exit_code::kUsage;
  }
  const std::string token = std::to_string(CurrentProcessId());
  const std::unique_ptr<AttachReceiver> channel = AttachReceiver::Open(token);
  if (!channel) {
    std::fprintf(stderr, "trtwatch run: cannot open the channel to the program; running it unwatched\n");
  }
  CommandSpec spec{options.command, channel ? CommandEnvironment(AttachFolder(options.attach_dir), channel->child_fd(),
                                                                 options.preload_major)
                                            : CurrentEnvironment()};
  CommandStart started = CommandStart::Run(spec);
  if (channel) channel->CloseChildEnd();
  if (!started.process) {
    std::fprintf(stderr, "trtwatch run: %s\n", started.error.c_str());
    return started.not_found ? 127 : 126;
  }
  CommandProcess& command = *started.process;
  AttachedBuilds builds([&](int number, const Event& start) { return OptionsOfBuild(options, number, start); },
                        [&](int pid, int build) { (void)channel->SendCancel(pid, std::to_string(build)); });
  std::atomic<int> interrupts{0};  // counted by the signal thread, acted on by this loop
  SignalWatch signals(
      [&](ProcessSignal signal) {
        if (signal == ProcessSignal::kInterrupt || signal == ProcessSignal::kTerminate) interrupts.fetch_add(1);
      },
      false);
  int handled = 0;
  const auto on_message = [&](std::string_view message) { builds.OnMessage(message); };
  for (;;) {
    if (channel) channel->Receive(command.exit_descriptor(), kPollMs, on_message);
    for (const int seen = interrupts.load(); handled < seen; ++handled) HandleInterrupt(handled == 0, builds, command);
    builds.ForwardCancels();
    if (const std::optional<CommandExit> ended = command.Poll()) {
      if (channel) channel->Receive(-1, 0, on_message);
      return Conclude(*ended, options.command[0], builds);
    }
  }
}

}  // namespace trtwatch
