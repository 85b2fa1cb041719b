// ProgressAdapter: TensorRT's nvinfer1::IProgressMonitor forwarding each callback to
// the core Monitor, which has the same three methods with the same signatures. It is
// the public header-only adapter (<trtwatch/tensorrt.h>) aimed at the Monitor instead
// of a Watch, so the backend and users attach trtwatch with the same code, and the
// backend's tests (9.x and 10.x shapes of the double) test the public adapter too.
//
// Threading: TensorRT calls the adapter from several internal threads at once; the
// Monitor is thread-safe, and the adapter holds nothing but a reference to it. The
// Monitor must outlive every TensorRT object the adapter is attached to.
//
// With logger_adapter.* and tensorrt_backend.*, the only code that includes TensorRT.
#pragma once

#include <trtwatch/tensorrt.h>

#include "core/monitor.h"

namespace trtwatch::trt {

using ProgressAdapter = tensorrt::BasicProgressMonitor<Monitor>;

}  // namespace trtwatch::trt
