// The one injectable monotonic clock. Everything that stamps time in the core and the
// builds layer reads it, so tests run on simulated time (tests/support/fake_clock.h).
#pragma once

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

inline double NsToSeconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace trtwatch
