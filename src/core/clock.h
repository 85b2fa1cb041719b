// The one injectable monotonic clock. Everything that stamps time in the core reads
// it, so tests run on simulated time with FakeClock.
#pragma once

#include <atomic>
#include <cstdint>

namespace trtwatch {

class Clock {
 public:
  virtual ~Clock() = default;
  // Nanoseconds on a monotonic timeline with an arbitrary origin. Thread-safe.
  virtual int64_t NowNs() const noexcept = 0;
};

// std::chrono::steady_clock.
class SteadyClock final : public Clock {
 public:
  int64_t NowNs() const noexcept override;
  static const SteadyClock& Instance();
};

// Time that moves only when told to. Thread-safe: the value is one atomic.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_ns = 0) : now_ns_(start_ns) {}
  int64_t NowNs() const noexcept override { return now_ns_.load(std::memory_order_acquire); }
  void AdvanceNs(int64_t ns) { now_ns_.fetch_add(ns, std::memory_order_acq_rel); }
  void AdvanceSeconds(double s) { AdvanceNs(static_cast<int64_t>(s * 1e9)); }

 private:
  std::atomic<int64_t> now_ns_;
};

inline double NsToSeconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace trtwatch
