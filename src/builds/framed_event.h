// FramedEvent: one event of a build (or one record change) as its live readers get it,
// framed once as Server-Sent Events (protocol/sse_frame.h) and shared, immutable, by
// every reader however many there are.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace trtwatch::builds {

struct FramedEvent {
  uint64_t seq = 0;
  bool step = false;     // a step event: may be coalesced (latest wins) when behind
  int64_t phase_id = 0;  // the step's phase
  std::shared_ptr<const std::string> frame;
};

}  // namespace trtwatch::builds
