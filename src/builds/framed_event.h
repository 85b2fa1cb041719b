// FramedEvent: one event of a build (or one record change) as its live readers get it,
// framed once as Server-Sent Events (protocol/sse_frame.h) and shared, immutable, by
// every reader however many there are.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace trtwatch::builds {

struct FramedEvent {
  uint64_t seq = 0;
  bool step = false;     // a step event: may be coalesced (latest wins) when behind
  int64_t phase_id = 0;  // the step's phase
  std::shared_ptr<const std::string> frame;
};

// The "type" of a stored event line, read without parsing the whole line (every line
// was written by EventToJson or checked by EventFromJson before it was stored); empty
// when the line has none.
std::string_view StoredEventType(std::string_view line);

// A stored event line framed as its live readers get it; false when it is no event
// line (never stored by this service).
bool FrameStoredEvent(uint64_t seq, std::string_view line, FramedEvent* item);

}  // namespace trtwatch::builds
