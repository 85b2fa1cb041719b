// Watch: trtwatch attached to a build of your own — the live view, JSON events, a
// timeout, a stall watch, clean Ctrl+C and a result that tells success, failure,
// cancellation and timeout apart. The same build path as `trtwatch build`.
//
//   trtwatch::Watch watch({.timeout = std::chrono::hours(2), .handle_signals = true});
//   trtwatch::tensorrt::ProgressMonitor monitor(watch);      // <trtwatch/tensorrt.h>
//   config->setProgressMonitor(&monitor);
//   trtwatch::BuildResult result = watch.Run([&] {
//     plan.reset(builder->buildSerializedNetwork(*network, *config));
//     return plan != nullptr;
//   });
//   return result.exit_code;  // 0, 1, 124, 130, 143: as `trtwatch build` exits
//
// Threading contract:
//  - phaseStart, stepComplete and phaseFinish (TensorRT's IProgressMonitor callbacks,
//    same names and signatures) and Log may be called from any number of threads at
//    once. They never block on I/O, never throw, never call a sink: they record into
//    the core in tens of nanoseconds, and delivery runs on threads of trtwatch's own.
//    stepComplete returns false from the first call after a cancel request, on every
//    thread, which is how TensorRT is asked to stop at its next step.
//  - Cancel and cancel_requested may be called from any thread at any time.
//  - Start/Finish (or Run, which does both around your build call) belong to one
//    thread, once per Watch. One Watch is one build.
//  - The Watch must outlive every TensorRT object its adapter is attached to; the
//    destructor concludes a started build that was never finished (sinks are closed,
//    the terminal restored).
//  - With handle_signals, Ctrl+C, SIGTERM and SIGHUP cancel cooperatively while the
//    build runs, and a second Ctrl+C restores the terminal and exits the process
//    (130). Only one Watch in a process may handle signals at a time. kill_after also
//    exits the process (137) when the builder ignores a cancel for that long.
//
// Stable across 0.x minor versions: the names in this header, <trtwatch/event.h>,
// <trtwatch/result.h>, <trtwatch/sink.h> and the event protocol (v1).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <trtwatch/event.h>
#include <trtwatch/result.h>
#include <trtwatch/sink.h>

namespace trtwatch {

class Runner;
class EngineCache;  // <trtwatch/engine_cache.h>

class Monitor;  // the core's callback target (private)
class Watch;
struct SimulateOptions;
BuildResult Simulate(Watch& watch, const SimulateOptions& options);  // <trtwatch/simulate.h>
struct ReplayOptions;
BuildResult Replay(Watch& watch, const ReplayOptions& options);  // <trtwatch/replay.h>

// Where progress is shown: kTty a live view on stderr, kPlain lines on stderr, kJson
// the event stream on stdout, kQuiet nothing; kAuto picks tty on an interactive
// terminal and plain otherwise (CI, pipes), honouring TRTWATCH_PROGRESS.
enum class Progress : uint8_t { kAuto, kTty, kPlain, kJson, kQuiet };
// Colour in the live view; kAuto honours NO_COLOR, CLICOLOR_FORCE and FORCE_COLOR.
enum class Color : uint8_t { kAuto, kAlways, kNever };
// What a stall (no callback for stall_timeout) does: a stall event, or also a cancel.
enum class StallAction : uint8_t { kWarn, kCancel };

using Seconds = std::chrono::duration<double>;

struct WatchOptions {
  Progress progress = Progress::kAuto;
  Color color = Color::kAuto;
  std::string events_file;  // also write the event stream (JSON lines) to this file
  std::string trace_file;   // write the phase timeline (Chrome Trace Event format) here
  std::optional<Seconds> timeout;        // cancel (reason timeout) after this long
  std::optional<Seconds> stall_timeout;  // warn when TensorRT reports nothing this long
  StallAction stall_action = StallAction::kWarn;
  std::optional<Seconds> kill_after;     // exit 137 if a cancel has no effect this long
  bool handle_signals = false;           // Ctrl+C / SIGTERM -> cooperative cancel
  std::vector<std::shared_ptr<Sink>> sinks;  // your own consumers of the stream
  std::string model;  // what build_start names as the model
  std::string backend = "tensorrt";
  Facts facts;  // more build_start facts: ("precision", "fp16"), ...
  // The build history (docs/history.md): its folder ("": TRTWATCH_HISTORY, else the
  // user's state folder), or none. A build is remembered, and shows an ETA from the
  // earlier ones, when it has a build key (Simulate's builds do).
  std::string history;
  bool no_history = false;
};

class Watch {
 public:
  // Checks the options and opens the files. Throws std::invalid_argument with a
  // message naming the problem and its fix (an unwritable events file, a forced tty
  // view without a terminal, a zero timeout, ...). Nothing is shown before Start.
  explicit Watch(WatchOptions options = {});
  ~Watch();
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  // TensorRT's nvinfer1::IProgressMonitor, name for name (see the contract above).
  void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept;
  bool stepComplete(char const* phaseName, int32_t step) noexcept;
  void phaseFinish(char const* phaseName) noexcept;

  // A log line in the stream (TensorRT's logger forwards here; see tensorrt.h).
  void Log(Severity severity, std::string_view message) noexcept;

  // Adds a build_start fact. Before Start only.
  void AddFact(std::string key, std::string value);

  // The build begins: build_start, the view, the timeout and signal handling start.
  void Start();
  // Your build call returned; `engine_built` says whether it produced an engine,
  // `error` why not (default: TensorRT's latest error lines, from Log). Delivers the
  // rest of the stream, closes the sinks and returns the result.
  BuildResult Finish(bool engine_built, std::string error = {});
  // Start, `build` on this thread, Finish(build's value). An exception from `build`
  // ends the build failed with its message, and is not rethrown.
  BuildResult Run(const std::function<bool()>& build);

  // Asks the build to stop at its next step; true if this call made the request
  // (false: one was already made). A build that then returns no engine ends
  // cancelled (timed_out for kTimeout); one that returns an engine anyway succeeded.
  bool Cancel(std::string message = "cancelled through the API", CancelReason reason = CancelReason::kApi);
  bool cancel_requested() const noexcept;

  // The build's id ("b_" and 32 hex digits), as build_start carries it.
  const std::string& build_id() const;

 private:
  friend class EngineCache;  // GetOrBuild under a watch
  friend BuildResult Simulate(Watch& watch, const SimulateOptions& options);
  friend BuildResult Replay(Watch& watch, const ReplayOptions& options);
  // What build_start says about the backend, replaced before Start (the simulation).
  void Describe(std::string backend, std::string model, const Facts& facts);
  // The build's key and the engine cache's answer (EngineCache::GetOrBuild), before
  // Start: build_start, build_finish and the result carry them, and the history
  // knows the build by the key (a hit, which built nothing, is not remembered).
  void DescribeCache(const std::vector<std::pair<std::string, std::string>>& key_parts, CacheUse use);
  // What build_start names as the model (the engine cache's entries are named by it).
  const std::string& model() const;
  // The one build path under this watch (the simulation gives it the build's key recipe).
  Runner& runner();

  struct State;
  std::unique_ptr<State> state_;
  Monitor* monitor_ = nullptr;  // owned by state_: the callbacks' one indirection
};

}  // namespace trtwatch
