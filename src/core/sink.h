// A consumer of the event stream: terminal, plain lines, JSON lines, trace, service.
#pragma once

#include "core/event.h"

namespace trtwatch {

class Sink {
 public:
  virtual ~Sink() = default;
  // Called on the sink's own delivery thread, one event at a time, in seq order.
  // May be slow: a slow sink loses coalescable events, never slows the build.
  virtual void OnEvent(const Event& event) = 0;
  // Delivery is over (build_finish was the last event). Flush what is buffered.
  virtual void Close() {}
};

}  // namespace trtwatch
