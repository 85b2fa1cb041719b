// ProgressAdapter: TensorRT's nvinfer1::IProgressMonitor, forwarding each callback to
// the core Monitor, which has the same three methods with the same signatures.
//
// TensorRT 9.x declares IProgressMonitor as a plain abstract class; 10.x and 11.x
// declare it in nvinfer1::v_1_0, deriving from IVersionedInterface, and implement
// getInterfaceInfo() themselves (applications must not override it). The adapter
// uses the unversioned name and overrides only the three callbacks, so one source
// fits both shapes; progress_adapter.cc checks the shape against NV_TENSORRT_MAJOR.
//
// Threading: TensorRT calls the adapter from several internal threads at once; the
// Monitor is thread-safe, and the adapter holds nothing but a reference to it. The
// Monitor must outlive every TensorRT object the adapter is attached to.
//
// With logger_adapter.* and tensorrt_backend.*, the only code that includes TensorRT.
#pragma once

#include <NvInfer.h>

#include <cstdint>

#include "core/monitor.h"

namespace trtwatch::trt {

class ProgressAdapter final : public nvinfer1::IProgressMonitor {
 public:
  explicit ProgressAdapter(Monitor& monitor) noexcept : monitor_(monitor) {}
  ~ProgressAdapter() noexcept override = default;
  ProgressAdapter(const ProgressAdapter&) = delete;
  ProgressAdapter& operator=(const ProgressAdapter&) = delete;

  void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept override;
  bool stepComplete(char const* phaseName, int32_t step) noexcept override;
  void phaseFinish(char const* phaseName) noexcept override;

 private:
  Monitor& monitor_;
};

}  // namespace trtwatch::trt
