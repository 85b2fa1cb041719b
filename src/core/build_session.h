// BuildSession: one build, start to finish. Wires a Monitor to its sinks through a
// Dispatcher, runs the watchdog, calls the backend's build function on the calling
// thread and concludes the result once every sink has received build_finish.
#pragma once

#include <functional>
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

  // Runs the build on this thread. An exception from `build` ends it as failed.
  BuildResult Run(const BuildInfo& info, const BuildFunction& build);

 private:
  const SessionOptions options_;
  Monitor monitor_;
  Dispatcher dispatcher_;
};

}  // namespace trtwatch
