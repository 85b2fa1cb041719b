// A one-shot cancellation request with a reason, a message and the time it was made.
//
// Threading: Request() may race from any number of threads; exactly one wins and its
// reason, message and time are the ones kept. IsRequested() is a single acquire load
// (a few nanoseconds), safe on TensorRT's callback threads. The winner writes the
// details before the release store that publishes them, so a reader that saw
// IsRequested() == true also sees them (the pattern of absl::Notification).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include <trtwatch/result.h>

namespace trtwatch {

class CancellationSource {
 public:
  // Returns true if this call made the request, false if one was already made. Either
  // way IsRequested() is true when it returns.
  bool Request(CancelReason reason, std::string message, int64_t now_ns);

  bool IsRequested() const noexcept { return state_.load(std::memory_order_acquire) == kRequested; }

  // Valid only once IsRequested() returned true.
  CancelReason reason() const { return reason_; }
  const std::string& message() const { return message_; }
  int64_t requested_at_ns() const { return requested_at_ns_; }

 private:
  enum State : int { kIdle, kClaimed, kRequested };
  // kIdle -> kClaimed (CAS by the single winner) -> kRequested (release store after
  // the fields below are written). The fields are written once, before publication.
  std::atomic<int> state_{kIdle};
  CancelReason reason_ = CancelReason::kUser;
  std::string message_;
  int64_t requested_at_ns_ = 0;
};

}  // namespace trtwatch
