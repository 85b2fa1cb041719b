#include "cli/build_command.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "backends/simulated/simulator.h"
#include "backends/tensorrt/factory.h"
#include "cli/duration.h"
#include "cli/exit_codes.h"
#include "core/build_id.h"
#include "core/build_session.h"
#include "platform/signal_watch.h"
#include "sinks/jsonl_sink.h"
#include "sinks/plain_sink.h"

namespace trtwatch {

namespace {

int UsageError(const std::string& message) {
  std::fprintf(stderr, "trtwatch build: %s\n", message.c_str());
  return exit_code::kUsage;
}

int ExitCodeFor(const BuildResult& result, std::optional<ProcessSignal> signal) {
  switch (result.status) {
    case BuildStatus::kSucceeded:
      return exit_code::kSucceeded;
    case BuildStatus::kFailed:
      return exit_code::kFailed;
    case BuildStatus::kTimedOut:
      return exit_code::kTimedOut;
    case BuildStatus::kCancelled:
      if (result.cancel_reason == CancelReason::kStall) return exit_code::kTimedOut;
      if (signal == ProcessSignal::kInterrupt) return exit_code::kInterrupted;
      return exit_code::kTerminated;
  }
  return exit_code::kFailed;
}

}  // namespace

int RunBuildCommand(const BuildCommandOptions& options) {
  // Everything the user gave is checked before anything starts.
  std::unique_ptr<Backend> backend;
  if (!options.simulate.empty()) {
    if (!options.model.empty()) {
      return UsageError("give either a model or --simulate PROFILE, not both");
    }
    if (!(options.speed > 0)) return UsageError("--speed must be greater than zero");
    std::string error;
    std::optional<sim::Profile> profile = sim::LoadProfile(options.simulate, &error);
    if (!profile) return UsageError(error);
    backend = std::make_unique<sim::SimulatedBackend>(*profile, sim::SimulationOptions{options.seed, options.speed});
  } else {
    // Input first (exit 2 with the fix), then whether this binary can build at all.
    trt::BuildOptions trt_options;
    std::string error;
    if (!trt::ResolveBuildOptions(options.model, options.output, options.tensorrt, &trt_options, &error) ||
        !trt::CheckBuildPaths(trt_options, &error)) {
      return UsageError(error);
    }
    backend = trt::MakeTensorRtBackend(trt_options, &error);
    if (!backend) return UsageError(error);
  }

  SessionOptions session_options;
  if (!options.timeout.empty()) {
    double seconds = 0;
    std::string error;
    if (!ParseDuration(options.timeout, &seconds, &error)) return UsageError("--timeout: " + error);
    session_options.watchdog.timeout = seconds;
    session_options.watchdog.timeout_text = options.timeout;
  }

  std::vector<std::unique_ptr<Sink>> owned;
  if (options.progress == "json") {
    owned.push_back(std::make_unique<JsonlSink>(stdout));
  } else if (options.progress == "plain" || options.progress == "auto") {
    owned.push_back(std::make_unique<PlainSink>(stderr));
  } else if (options.progress != "quiet") {
    return UsageError("--progress must be one of auto, plain, json, quiet (got \"" + options.progress + "\")");
  }
  if (!options.events_file.empty()) {
    std::string error;
    std::unique_ptr<JsonlSink> events = JsonlSink::OpenFile(options.events_file, &error);
    if (!events) return UsageError("--events: " + error);
    owned.push_back(std::move(events));
  }
  std::vector<Sink*> sinks;
  for (auto& sink : owned) sinks.push_back(sink.get());

  BuildInfo info = backend->Describe();
  info.build_id = NewBuildId();
  BuildSession session(SteadyClock::Instance(), sinks, session_options);

  // The first terminating signal, as its enum value; -1 for none. Atomic: written by
  // the signal thread, read here after the build.
  std::atomic<int> first_signal{-1};
  SignalWatch signals(
      [&](ProcessSignal signal) {
        if (signal != ProcessSignal::kInterrupt && signal != ProcessSignal::kTerminate &&
            signal != ProcessSignal::kHangup) {
          return;
        }
        int none = -1;
        if (!first_signal.compare_exchange_strong(none, static_cast<int>(signal))) return;
        session.monitor().RequestCancel(CancelReason::kSignal,
                                        signal == ProcessSignal::kInterrupt ? "interrupted (SIGINT)"
                                        : signal == ProcessSignal::kTerminate ? "terminated (SIGTERM)"
                                                                              : "hung up (SIGHUP)");
      },
      /*watch_terminal_signals=*/false);

  const BuildResult result = session.Run(info, [&](Monitor& monitor) { return backend->Build(monitor); });
  const int signal = first_signal.load();
  return ExitCodeFor(result, signal < 0 ? std::nullopt : std::optional(static_cast<ProcessSignal>(signal)));
}

}  // namespace trtwatch
