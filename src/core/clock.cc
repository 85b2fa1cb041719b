#include "core/clock.h"

#include <chrono>

namespace trtwatch {

int64_t SteadyClock::NowNs() const noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Clock::SystemUnixSeconds() noexcept {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double Clock::FileUnixSeconds(std::filesystem::file_time_type time) noexcept {
  const auto system = std::chrono::file_clock::to_sys(time);
  return std::chrono::duration<double>(system.time_since_epoch()).count();
}

const SteadyClock& SteadyClock::Instance() {
  static const SteadyClock clock;
  return clock;
}

}  // namespace trtwatch
