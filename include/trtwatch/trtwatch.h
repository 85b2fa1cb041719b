// trtwatch: live progress, clean cancellation and timing for TensorRT engine builds.
// Everything but the TensorRT adapters (<trtwatch/tensorrt.h>, which need TensorRT's
// headers). docs/cpp.md is the guide.
#pragma once

#include <trtwatch/annotations.h>
#include <trtwatch/engine_cache.h>
#include <trtwatch/event.h>
#include <trtwatch/replay.h>
#include <trtwatch/result.h>
#include <trtwatch/simulate.h>
#include <trtwatch/sink.h>
#include <trtwatch/version.h>
#include <trtwatch/watch.h>
