// Watchdog: the build's time budget and its stall watch, on a thread of their own.
//
// At `timeout` after the build started it requests cancellation (reason timeout).
// When no progress callback arrived for `stall_after`, it emits a stall event (again
// after each further `stall_after` of the same silence) and, with `cancel_on_stall`,
// requests cancellation (reason stall). Time is read from the monitor's clock; the
// thread re-reads it at least every `poll` so that it also follows a simulated clock.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "core/monitor.h"
#include "core/mutex.h"

namespace trtwatch {

struct WatchdogOptions {
  std::optional<double> timeout;      // seconds
  std::string timeout_text;           // how the user set it, for the message: "--timeout 2h"
  std::optional<double> stall_after;  // seconds
  bool cancel_on_stall = false;
  std::chrono::milliseconds poll{50};
};

class Watchdog {
 public:
  Watchdog(Monitor& monitor, WatchdogOptions options);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void Stop() EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);
  void CheckStall();

  Monitor& monitor_;
  const WatchdogOptions options_;

  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;

  // Watchdog thread only: the silence already reported, to report each interval once.
  int64_t silence_start_ns_ = 0;
  int stalls_reported_ = 0;

  std::thread thread_;  // started last
};

}  // namespace trtwatch
