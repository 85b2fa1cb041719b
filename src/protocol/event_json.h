// The event stream's wire form: one JSON object per line (docs/events.md,
// docs/events.schema.json). Used by the JSON-lines sink, replay and the service.
#pragma once

#include <string>
#include <string_view>

#include "core/event.h"

namespace trtwatch {

// One line of JSON, without the trailing newline.
std::string EventToJson(const Event& event);

// Parses one line. On failure returns false and says why in `*error`.
bool EventFromJson(std::string_view line, Event* event, std::string* error);

}  // namespace trtwatch
