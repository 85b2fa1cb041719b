// A fake clock that can freeze one thread right after it reads the time, so that a
// test can run other calls inside that window and make a race deterministic.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "core/clock.h"
#include "core/mutex.h"

namespace trtwatch::testing {

class PausingClock final : public Clock {
 public:
  explicit PausingClock(int64_t start_ns = 0) : now_ns_(start_ns) {}

  int64_t NowNs() const noexcept override {
    const int64_t now = now_ns_.load(std::memory_order_acquire);
    MutexLock lock(&mu_);
    if (armed_ && std::this_thread::get_id() == target_ && --reads_left_ == 0) {
      armed_ = false;
      paused_ = true;
      cv_.SignalAll();
      while (paused_) cv_.Wait(&mu_);
    }
    return now;
  }

  void AdvanceNs(int64_t ns) { now_ns_.fetch_add(ns, std::memory_order_acq_rel); }

  // The `nth` clock read made by `thread` from now on parks that thread until Resume().
  void PauseAfterRead(std::thread::id thread, int nth = 1) {
    MutexLock lock(&mu_);
    armed_ = true;
    target_ = thread;
    reads_left_ = nth;
  }
  // Waits until the armed thread is parked; false if it did not get there in time.
  bool WaitUntilPaused(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    MutexLock lock(&mu_);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!paused_ && std::chrono::steady_clock::now() < deadline) cv_.WaitFor(&mu_, std::chrono::milliseconds(10));
    return paused_;
  }
  void Resume() {
    MutexLock lock(&mu_);
    paused_ = false;
    armed_ = false;
    cv_.SignalAll();
  }

 private:
  std::atomic<int64_t> now_ns_;
  mutable Mutex mu_;
  mutable CondVar cv_;
  mutable bool armed_ GUARDED_BY(mu_) = false;
  mutable bool paused_ GUARDED_BY(mu_) = false;
  mutable int reads_left_ GUARDED_BY(mu_) = 0;
  std::thread::id target_ GUARDED_BY(mu_);
};

}  // namespace trtwatch::testing
