// Sink: a consumer of the event stream — the terminal view, JSON lines, a trace file,
// or your own (a GUI, a metrics exporter, a log shipper).
//
// Threading contract: each sink gets a delivery thread of its own, fed through a
// bounded queue. OnEvent is called on that thread, one event at a time, in `seq`
// order; never on TensorRT's threads, never concurrently with itself or Close. A
// sink may be slow: it then receives coalesced steps (the latest step of a phase
// wins) and may miss logs and stalls, counted in build_finish's `dropped`; it never
// slows the build and never misses a structural event (build, phase start/finish,
// cancellation). A sink that throws is detached and counted, never a crash.
// State a sink shares with other threads is the sink's to guard
// (<trtwatch/annotations.h> has the annotations).
#pragma once

#include <trtwatch/event.h>

namespace trtwatch {

class Sink {
 public:
  virtual ~Sink() = default;
  // One event. build_finish is the last one of a build.
  virtual void OnEvent(const Event& event) = 0;
  // Delivery is over. Flush what is buffered.
  virtual void Close() {}
};

}  // namespace trtwatch
