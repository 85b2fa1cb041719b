// The event stream's wire form (docs/events.md, docs/events.schema.json): EventToJson and
// EventFromJson are declared in the public <trtwatch/event.h>; implemented here, used by
// the JSON-lines sink, replay and the service.
#pragma once

#include <trtwatch/event.h>
