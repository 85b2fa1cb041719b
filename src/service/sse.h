// Server-Sent Events on the service side: the Last-Event-ID a client resumes from, and
// the bounded, coalescing queue that stands between the build and one slow client
// (the framing itself is protocol/sse_frame.h).
//
// Threading: pure functions; an SseQueue belongs to one thread (the service's event
// loop) and is not synchronised. Frames are shared, immutable strings, so one event
// costs one allocation however many clients receive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "builds/framed_event.h"

namespace trtwatch::service {

using builds::FramedEvent;

// Parses a Last-Event-ID header value: decimal digits only, 0 to 2^64-1 (the seq type).
// Empty or absent means "from the start" (0). Returns false for anything else (a sign,
// a fraction, a value beyond the range), so the caller can refuse it.
bool ParseLastEventId(std::string_view value, uint64_t* seq);

// Events waiting to be written to one client. Below `coalesce_at` items it keeps every
// event. From there on a new step replaces the queued step of the same phase (the old
// one is removed, the new one appended, so ids stay increasing and Last-Event-ID stays
// exact). If the queue still reaches `limit`, Push reports overflow: the client is too
// slow and is cut off (it may reconnect and replay from the stored log).
//
// Events come in deliveries (one stored batch of the log, handed over at once): what
// counts is the backlog a delivery finds, the events the client had not taken from
// earlier ones. A client that keeps up gets every event however large one delivery is;
// only one that fell behind has its steps coalesced. Push without a delivery number:
// each event is its own delivery.
class SseQueue {
 public:
  enum class PushResult { kQueued, kCoalesced, kOverflow };

  SseQueue(size_t coalesce_at, size_t limit) : coalesce_at_(coalesce_at), limit_(limit) {}

  PushResult Push(FramedEvent item, uint64_t delivery = 0);
  std::optional<FramedEvent> Pop();
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  uint64_t coalesced() const { return coalesced_; }

 private:
  const size_t coalesce_at_;
  const size_t limit_;
  std::deque<FramedEvent> items_;
  uint64_t coalesced_ = 0;  // steps replaced by a later step of their phase
  uint64_t delivery_ = 0;   // the delivery being pushed
  size_t backlog_ = 0;      // the queue's length when it began
};

}  // namespace trtwatch::service
