// FakeClock: time that moves only when a test tells it to (core/clock.h's Clock), so
// tests of timeouts, stalls, leases and estimates run on simulated time.
//
// Threading: thread-safe; the value is one atomic (the watchdog's thread reads it
// while the test's thread advances it).
#pragma once

#include <atomic>
#include <cstdint>

#include "core/clock.h"

namespace trtwatch {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_ns = 0) : now_ns_(start_ns) {}
  int64_t NowNs() const noexcept override { return now_ns_.load(std::memory_order_acquire); }
  // The wall clock moves with the fake one, from a fixed day (2026-01-01 UTC).
  double UnixSeconds() const noexcept override { return kStartUnix + static_cast<double>(NowNs()) / 1e9; }
  static constexpr double kStartUnix = 1767225600;
  void AdvanceNs(int64_t ns) { now_ns_.fetch_add(ns, std::memory_order_acq_rel); }
  void AdvanceSeconds(double s) { AdvanceNs(static_cast<int64_t>(s * 1e9)); }

 private:
  std::atomic<int64_t> now_ns_;
};

}  // namespace trtwatch
