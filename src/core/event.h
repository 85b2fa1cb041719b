// The event type is public: <trtwatch/event.h>.
#pragma once

#include <trtwatch/event.h>
