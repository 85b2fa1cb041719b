// The Sink interface is public: <trtwatch/sink.h>.
#pragma once

#include <trtwatch/sink.h>
