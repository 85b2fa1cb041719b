// Events as a backend's monitor would emit them, built in one line for tests.
#pragma once

#include <string>

#include "core/event.h"

namespace trtwatch::testing {

inline Event PhaseStart(double t, int64_t id, int64_t parent, const std::string& name, int32_t total = 4) {
  Event e;
  e.type = EventType::kPhaseStart;
  e.t = t;
  e.id = id;
  e.parent = parent;
  e.phase = name;
  e.total = total;
  return e;
}

inline Event PhaseStep(double t, int64_t id, int32_t step) {
  Event e;
  e.type = EventType::kStep;
  e.t = t;
  e.id = id;
  e.step = step;
  return e;
}

inline Event PhaseFinish(double t, int64_t id, int32_t completed = 4, int32_t total = 4) {
  Event e;
  e.type = EventType::kPhaseFinish;
  e.t = t;
  e.id = id;
  e.completed = completed;
  e.total = total;
  e.early = completed < total;
  return e;
}

}  // namespace trtwatch::testing
