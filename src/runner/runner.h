// Runner: the one build path. `trtwatch build` (and so the service's worker
// processes, which are `trtwatch build --progress json`), the public Watch API, the
// Python module and the MCP server all hand it options and a build function, and get
// a result with its exit code back. No front end assembles a build its own way.
//
// What it assembles: the progress view the output mode picks (tty, plain, json,
// quiet), the event and trace files, the caller's own sinks, the watchdog (timeout,
// stall), signal handling (Ctrl+C / SIGTERM -> cooperative cancel, a second Ctrl+C
// forces) and --kill-after.
//
// Threading: Create, Start, Finish and Run belong to one thread; monitor() is
// thread-safe (cancel from anywhere, TensorRT's callbacks from its threads).
// Lifecycle: Create -> Start -> (the build) -> Finish, once; Run does all three.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/build_result.h"
#include "core/build_session.h"
#include "core/clock.h"
#include "core/monitor.h"
#include "core/sink.h"
#include "cache/engine_cache.h"
#include "history/history_file.h"
#include "keys/build_key.h"
#include "runner/output_mode.h"

namespace trtwatch {

// Where the build is remembered and what it is remembered by (docs/history.md).
struct HistoryOptions {
  std::string folder;  // empty: no history (--no-history); a build without a key is not remembered either
  history::HistoryLimits limits;
};

struct RunOptions {
  OutputFlags output;  // --progress / --color, as the user wrote them
  std::string events_file;  // the event stream as JSON lines, in any mode
  std::string trace_file;   // the phase timeline (Chrome Trace Event format)
  std::optional<double> timeout;        // seconds: cancel (reason timeout) after this
  std::optional<double> stall_timeout;  // seconds of silence before a stall event
  bool cancel_on_stall = false;         // a stall also cancels (reason stall)
  std::optional<double> kill_after;     // seconds after a cancel request: exit 137
  // Ctrl+C, SIGTERM and SIGHUP cancel cooperatively; a second Ctrl+C exits 130. Only
  // one runner in a process may watch signals at a time.
  bool handle_signals = true;
  // The earlier builds of the key give the estimate; this one is added at the end.
  // Problems with the history are warnings, never a failed build.
  HistoryOptions history;
  std::vector<Sink*> sinks;  // further consumers, owned by the caller; outlive the runner
  // How messages name the program and options: "trtwatch build" with flag names, or
  // a library's own wording.
  std::string program = "trtwatch build";
  // What the build depends on (keys/tensorrt_key.h, keys/simulated_key.h): the runner
  // computes the build key from it before the build, build_start and the result carry
  // it. A recipe's error, or a key that cannot be computed, is a warning, not a failure.
  std::optional<keys::RecipeOutcome> key_recipe;
  // The engine cache (docs/cache.md), used when the build has a key: a stored engine
  // of that key is placed at `engine` and the build never runs; else the build runs
  // and a succeeded engine is stored. An identical build running elsewhere is waited
  // for, then reused.
  struct EngineCacheUse {
    std::string folder;
    std::string engine;  // where the build writes its engine (-o)
    std::string model;   // what `trtwatch cache ls` names the entry by
    cache::CacheLimits limits;
  };
  std::optional<EngineCacheUse> engine_cache;

  // The outside world, replaceable in tests.
  const Clock* clock = nullptr;  // default: SteadyClock
  EnvLookup env;                 // default: the process environment
  std::optional<bool> stderr_is_terminal;  // default: isatty(2)
};

class Runner {
 public:
  // Checks everything the options ask for before anything starts: the output mode,
  // durations, that the files can be written. On bad input returns null and sets
  // `*error` to a message naming the problem and its fix.
  static std::unique_ptr<Runner> Create(RunOptions options, std::string* error);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // What the build depends on, when the caller knows it only after Create (a Watch's
  // simulation): replaces RunOptions::key_recipe. Before Start only.
  void SetKeyRecipe(keys::RecipeOutcome recipe);

  // Thread-safe: the callbacks, Log, RequestCancel.
  Monitor& monitor();

  // Prints `line` on stderr above the live view (which is cleared, then drawn again
  // below it), so that the view's next frame does not draw over it.
  void Say(const std::string& line);

  // Computes the build key (when the options have a recipe), emits build_start (a build
  // id is drawn when `info` has none), starts the watchdog and, when asked for, signal
  // handling.
  void Start(BuildInfo info);
  // The build call returned: concludes the result, delivers build_finish to every sink,
  // prints the summary, and maps the result to an exit code.
  BuildResult Finish(const BuildOutcome& outcome);
  // Start, `build` on this thread (an exception ends it failed), Finish.
  BuildResult Run(BuildInfo info, const BuildFunction& build);

  bool started() const { return started_; }
  // The build key, once Start computed it (null without a recipe or on error).
  const keys::BuildKey* key() const;
  // Start found the engine in the cache and placed it: skip the build, Finish with an
  // engine built (Run does).
  bool reused() const;
  bool finished() const { return finished_; }

 private:
  struct Parts;
  explicit Runner(std::unique_ptr<Parts> parts);
  // Looks the key up in the engine cache, placing a hit's engine; says how in
  // `info->cache` and returns the warnings for the stream.
  std::vector<std::string> UseEngineCache(BuildInfo* info);
  // After a miss: keeps a succeeded engine, counts the miss, lets the next waiter in.
  void StoreInEngineCache(const BuildResult& result);
  // Reads the earlier builds of the build's key and starts the estimate events.
  void StartEstimates();
  // Adds the finished build to the history, if there is one; a failure is a warning.
  void Remember(const BuildResult& result);

  std::unique_ptr<Parts> parts_;
  bool started_ = false;
  bool finished_ = false;
};

// The exit code of `trtwatch build` for a result: 0 succeeded, 1 failed, 124 timed
// out (timeout, stall, budget), 130 cancelled by Ctrl+C or on request (user, api),
// 143 cancelled by SIGTERM/SIGHUP. `terminated_by_signal` says a SIGTERM/SIGHUP
// (rather than Ctrl+C) made a signal cancel.
int ExitCodeFor(const BuildResult& result, bool terminated_by_signal);

}  // namespace trtwatch
