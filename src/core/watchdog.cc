#include "core/watchdog.h"

#include <cstdio>

namespace trtwatch {

Watchdog::Watchdog(Monitor& monitor, WatchdogOptions options)
    : monitor_(monitor), options_(std::move(options)) {
  if (options_.timeout || options_.stall_after) thread_ = std::thread([this] { Run(); });
}

Watchdog::~Watchdog() { Stop(); }

void Watchdog::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::CheckStall() {
  const int64_t last = monitor_.LastCallbackNs();
  if (last != silence_start_ns_) {
    silence_start_ns_ = last;
    stalls_reported_ = 0;
  }
  const double silent = NsToSeconds(monitor_.clock().NowNs() - last);
  if (silent < *options_.stall_after * (stalls_reported_ + 1)) return;
  ++stalls_reported_;
  monitor_.ReportStall(silent);
  if (options_.cancel_on_stall) {
    char message[96];
    std::snprintf(message, sizeof message, "no progress from the builder for %.0f s", silent);
    monitor_.RequestCancel(CancelReason::kStall, message);
  }
}

void Watchdog::Run() {
  for (;;) {
    {
      MutexLock lock(&mu_);
      if (stop_) return;
      cv_.WaitFor(&mu_, options_.poll);
      if (stop_) return;
    }
    if (options_.timeout && monitor_.SecondsSinceStart() >= *options_.timeout) {
      monitor_.RequestCancel(CancelReason::kTimeout,
                             "the build exceeded its time budget (" + options_.timeout_text + ")");
    }
    if (options_.stall_after && !monitor_.IsCancelRequested()) CheckStall();
  }
}

}  // namespace trtwatch
