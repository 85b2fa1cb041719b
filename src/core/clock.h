// The one injectable clock: monotonic nanoseconds for durations, and the wall clock for
// times people read. Everything that stamps time in the core and the builds layer reads
// it, so tests run on simulated time (tests/support/fake_clock.h).
#pragma once

#include <cstdint>
#include <filesystem>

namespace trtwatch {

class Clock {
 public:
  virtual ~Clock() = default;
  // Nanoseconds on a monotonic timeline with an arbitrary origin. Thread-safe.
  virtual int64_t NowNs() const noexcept = 0;
  // Seconds since the Unix epoch, for times a record shows (created, started, finished).
  // Not monotonic. The system's unless a test's clock says otherwise. Thread-safe.
  virtual double UnixSeconds() const noexcept { return SystemUnixSeconds(); }
  // The system's wall clock, for code with no clock of its own to read (the engine
  // cache's entry times, a UI session's expiry).
  static double SystemUnixSeconds() noexcept;
  // A file's time (its modification, as std::filesystem reads it) on the same scale.
  static double FileUnixSeconds(std::filesystem::file_time_type time) noexcept;
};

// std::chrono::steady_clock.
class SteadyClock final : public Clock {
 public:
  int64_t NowNs() const noexcept override;
  static const SteadyClock& Instance();
};

inline double NsToSeconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace trtwatch
