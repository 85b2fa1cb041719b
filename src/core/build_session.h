// BuildSession: one build, start to finish. Wires a Monitor to its sinks through a
// Dispatcher, runs the watchdog while the build runs, and concludes the result once
// every sink has received build_finish.
//
// Threading: Start, Finish and Run belong to one thread, in that order and once;
// monitor() is thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "core/build_result.h"
#include "core/clock.h"
#include "core/dispatcher.h"
#include "core/monitor.h"
#include "core/sink.h"
#include "core/watchdog.h"

namespace trtwatch {

// What a backend does: build with the monitor attached and say whether an engine came
// out. It should honour monitor.IsCancelRequested() through stepComplete's value.
using BuildFunction = std::function<BuildOutcome(Monitor& monitor)>;

struct SessionOptions {
  WatchdogOptions watchdog;
  DeliveryOptions delivery;
};

class BuildSession {
 public:
  BuildSession(const Clock& clock, const std::vector<Sink*>& sinks, SessionOptions options);

  // Thread-safe access for whoever must cancel (signal thread, service, tests).
  Monitor& monitor() { return monitor_; }

  // Emits build_start and starts the watchdog.
  void Start(const BuildInfo& info);
  // The build call returned: stops the watchdog, emits build_finish and waits until
  // every sink has it.
  BuildResult Finish(const BuildOutcome& outcome);
  // Start, `build` on this thread (an exception ends it as failed), Finish.
  BuildResult Run(const BuildInfo& info, const BuildFunction& build);

 private:
  const SessionOptions options_;
  Monitor monitor_;
  Dispatcher dispatcher_;
  std::optional<Watchdog> watchdog_;  // while the build runs
};

// Calls `build`, turning an exception into a failed outcome with its message.
BuildOutcome CallBuild(const std::function<BuildOutcome()>& build);

}  // namespace trtwatch
