// TensorRtBackend: a real engine build. Parses an ONNX model with nvonnxparser,
// configures the builder from BuildOptions (trtexec's options), attaches the
// ProgressAdapter and builds with buildSerializedNetwork, then writes the engine and
// the timing cache atomically.
//
// Outcome: an engine is `succeeded`; no engine after a cancel request is `cancelled`
// or `timed_out` (the Monitor's cancellation record tells, as TensorRT's return value
// cannot); no engine otherwise is `failed`, with TensorRT's latest error lines.
// A cancel request that arrives after TensorRT produced the engine still wins: the
// engine is discarded, so an interrupted build never leaves a file behind.
//
// Threading: Build() runs on the caller's thread; TensorRT calls the adapters from its
// own threads meanwhile. One Build() at a time per object.
#pragma once

#include <string>

#include "backends/backend.h"
#include "backends/tensorrt/build_options.h"
#include "backends/tensorrt/logger_adapter.h"
#include "platform/nvml.h"

namespace trtwatch::trt {

class TensorRtBackend final : public Backend {
 public:
  // `nvml_library` is where GPU facts come from (tests pass a stand-in).
  explicit TensorRtBackend(BuildOptions options, const std::string& nvml_library = kNvmlLibrary);

  BuildInfo Describe() const override;
  BuildOutcome Build(Monitor& monitor) override;

 private:
  BuildOutcome BuildAttached(Monitor& monitor);
  std::string WithErrors(const std::string& message) const;
  void SaveTimingCache(const void* data, size_t size, Monitor& monitor) const;

  const BuildOptions options_;
  Facts facts_;
  LoggerAdapter logger_;
};

// build_start facts about TensorRT and the GPU: tensorrt_version (run time),
// tensorrt_headers (compile time), gpu, gpu_compute_capability, gpu_memory,
// driver_version, cuda_driver_version, gpu_count; or gpu_note when NVML is absent.
Facts TensorRtFacts(int32_t runtime_version, const NvmlReport& nvml);

}  // namespace trtwatch::trt
