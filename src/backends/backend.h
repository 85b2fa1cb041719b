// Backend: something that builds an engine (or pretends to, honestly) with a Monitor
// attached. Front ends run a backend through a BuildSession; they never talk to
// TensorRT themselves.
#pragma once

#include "core/build_result.h"
#include "core/monitor.h"

namespace trtwatch {

class Backend {
 public:
  virtual ~Backend() = default;
  // What build_start reports: backend name, model, facts.
  virtual BuildInfo Describe() const = 0;
  // Builds on the calling thread, feeding `monitor` (possibly from other threads).
  // Honours cancellation the way TensorRT does: stepComplete returning false.
  virtual BuildOutcome Build(Monitor& monitor) = 0;
};

}  // namespace trtwatch
