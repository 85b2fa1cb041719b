#include "core/cancellation.h"

#include <array>
#include <thread>

#include "core/enum_names.h"
#include <utility>

namespace trtwatch {

namespace {
constexpr std::array<std::string_view, 8> kReasonNames = {"user", "signal", "timeout", "stall",
                                                          "api",  "budget", "group",   "slurm_cancelled"};
}  // namespace

std::string_view CancelReasonName(CancelReason reason) {
  return kReasonNames[static_cast<size_t>(reason)];
}

bool ParseCancelReason(std::string_view name, CancelReason* reason) {
  return ParseEnumName(kReasonNames, name, reason);
}

bool CancellationSource::Request(CancelReason reason, std::string message, int64_t now_ns) {
  int expected = kIdle;
  if (!state_.compare_exchange_strong(expected, kClaimed, std::memory_order_acq_rel)) {
    // A loser says "already requested" only once the request is visible: its caller
    // (and that caller's next stepComplete) must not see "not requested" after that.
    // The winner is between its claim and its publication: a few stores away.
    while (state_.load(std::memory_order_acquire) != kRequested) std::this_thread::yield();
    return false;
  }
  reason_ = reason;
  message_ = std::move(message);
  requested_at_ns_ = now_ns;
  state_.store(kRequested, std::memory_order_release);
  return true;
}

}  // namespace trtwatch
