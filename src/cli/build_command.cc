#include "cli/build_command.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "backends/simulated/simulator.h"
#include "backends/tensorrt/factory.h"
#include "cli/duration.h"
#include "cli/exit_codes.h"
#include "cli/output_mode.h"
#include "cli/process_control.h"
#include "core/build_id.h"
#include "core/build_session.h"
#include "platform/terminal.h"
#include "sinks/jsonl_sink.h"
#include "sinks/plain_sink.h"
#include "sinks/trace_sink.h"
#include "sinks/tty_sink.h"

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

// Parses an optional duration flag into `*seconds`; false (and `*error`) if malformed.
bool OptionalDuration(const std::string& flag, const std::string& text, std::optional<double>* seconds,
                      std::string* error) {
  if (text.empty()) return true;
  double value = 0;
  if (!ParseDuration(text, &value, error)) {
    *error = flag + ": " + *error;
    return false;
  }
  *seconds = value;
  return true;
}

// The sink that shows progress in `mode` (null for quiet); `*view` is set to the live
// view when there is one, for signal handling.
std::unique_ptr<Sink> MakeProgressSink(const OutputMode& mode, TtySink** view) {
  switch (mode.progress) {
    case ProgressMode::kJson:
      return std::make_unique<JsonlSink>(stdout);
    case ProgressMode::kPlain:
      return std::make_unique<PlainSink>(stderr);
    case ProgressMode::kTty: {
      TtyOptions tty;
      tty.fd = STDERR_FILENO;
      tty.color = mode.color;
      tty.unicode = mode.unicode;
      auto sink = std::make_unique<TtySink>(SteadyClock::Instance(), tty);
      *view = sink.get();
      return sink;
    }
    case ProgressMode::kQuiet:
      break;
  }
  return nullptr;
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
  ProcessControlOptions control_options;
  std::string error;
  if (!OptionalDuration("--timeout", options.timeout, &session_options.watchdog.timeout, &error) ||
      !OptionalDuration("--stall-timeout", options.stall_timeout, &session_options.watchdog.stall_after, &error) ||
      !OptionalDuration("--kill-after", options.kill_after, &control_options.kill_after, &error)) {
    return UsageError(error);
  }
  session_options.watchdog.timeout_text = options.timeout;
  control_options.kill_after_text = options.kill_after;
  if (options.stall_action != "warn" && options.stall_action != "cancel") {
    return UsageError("--stall-action must be warn or cancel (got \"" + options.stall_action + "\")");
  }
  if (options.stall_action == "cancel" && options.stall_timeout.empty()) {
    return UsageError("--stall-action cancel needs --stall-timeout DUR (how long a silence may last)");
  }
  session_options.watchdog.cancel_on_stall = options.stall_action == "cancel";

  const std::optional<OutputMode> mode = ResolveOutputMode(OutputFlags{options.progress, options.color},
                                                           ProcessEnvironment(), IsTerminal(STDERR_FILENO), &error);
  if (!mode) return UsageError(error);

  // Files first: a bad path fails before anything is created or drawn.
  std::vector<std::unique_ptr<Sink>> owned;
  TraceSink* trace = nullptr;
  if (!options.trace_file.empty()) {
    std::unique_ptr<TraceSink> sink = TraceSink::Open(options.trace_file, &error);
    if (!sink) return UsageError("--trace: " + error);
    trace = sink.get();
    owned.push_back(std::move(sink));
  }
  if (!options.events_file.empty()) {
    std::unique_ptr<JsonlSink> events = JsonlSink::OpenFile(options.events_file, &error);
    if (!events) return UsageError("--events: " + error);
    owned.push_back(std::move(events));
  }
  TtySink* view = nullptr;
  if (std::unique_ptr<Sink> progress = MakeProgressSink(*mode, &view)) owned.push_back(std::move(progress));
  std::vector<Sink*> sinks;
  for (auto& sink : owned) sinks.push_back(sink.get());

  BuildInfo info = backend->Describe();
  info.build_id = NewBuildId();
  BuildSession session(SteadyClock::Instance(), sinks, session_options);

  ProcessControl control(session.monitor(), view, control_options);
  const BuildResult result = session.Run(info, [&](Monitor& monitor) {
    BuildOutcome outcome = backend->Build(monitor);
    control.BuildReturned();
    return outcome;
  });
  int code = ExitCodeFor(result, control.first_signal());
  if (trace != nullptr && !trace->error().empty()) {
    std::fprintf(stderr, "trtwatch build: %s\n", trace->error().c_str());
    if (code == exit_code::kSucceeded) code = exit_code::kFailed;
  }
  return code;
}

}  // namespace trtwatch
