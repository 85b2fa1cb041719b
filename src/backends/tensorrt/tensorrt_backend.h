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
// TensorRT's libraries are loaded at run time (LoadedTensorRt): nothing here links
// against them.
//
// Threading: Build() runs on the caller's thread; TensorRT calls the adapters from its
// own threads meanwhile. One Build() at a time per object.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "backends/backend.h"
#include "backends/tensorrt/build_options.h"
#include "backends/tensorrt/logger_adapter.h"
#include "backends/tensorrt/tensorrt_library.h"
#include "backends/timing_cache_file.h"
#include "platform/cuda_driver.h"
#include "platform/nvml.h"

namespace trtwatch::trt {

// Where GPU facts and device selection come from (tests pass stand-ins).
struct GpuLibraries {
  std::string nvml = kNvmlLibrary;
  std::string cuda = kCudaDriverLibrary;
};

class TensorRtBackend final : public Backend {
 public:
  // `tensorrt` must outlive the backend.
  TensorRtBackend(BuildOptions options, const LoadedTensorRt& tensorrt, GpuLibraries gpu_libraries = {});

  // Empty, or why --device cannot be used (no CUDA driver, no such device).
  const std::string& DeviceProblem() const { return device_problem_; }

  BuildInfo Describe() const override;
  BuildOutcome Build(Monitor& monitor) override;

 private:
  BuildOutcome BuildAttached(Monitor& monitor);
  std::string WithErrors(const std::string& message) const;
  // Every optimization profile (--profile, or the plain shape options), with
  // trtexec's defaults for dynamic inputs without shapes.
  bool ApplyProfiles(nvinfer1::IBuilder& builder, nvinfer1::INetworkDefinition& network,
                     nvinfer1::IBuilderConfig& config, Monitor& monitor, std::string* error) const;
  // TensorRT's standard plugins and the user's static ones, then a builder with the
  // user's dynamic plugins and thread limit; null with the reason in `*error`.
  std::unique_ptr<nvinfer1::IBuilder> MakeBuilder(Monitor& monitor, std::string* error);

  const BuildOptions options_;
  const LoadedTensorRt& tensorrt_;
  const GpuLibraries gpu_libraries_;
  Facts facts_;
  std::string device_problem_;
  int gpu_compute_capability_ = 0;  // 80 for 8.0; 0 when neither CUDA nor NVML says (for --best)
  TimingCacheFlags timing_cache_;  // --timing-cache, its file named
  LoggerAdapter logger_;
};

// MakeTensorRtBackend (factory.h) with the libraries already loaded.
std::unique_ptr<Backend> MakeTensorRtBackend(const BuildOptions& options, const LoadedTensorRt& tensorrt,
                                             std::string* error);

// The GPU a build runs on: CUDA's device `ordinal` (--device, 0 by default), with
// NVML's entry for it; NVML's entry of that index when the CUDA driver is absent.
struct BuildGpu {
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  uint64_t memory_total_bytes = 0;
  std::string pci_bus_id;
  std::string uuid;
};

// build_start facts about TensorRT and the GPU the builder uses: tensorrt_version
// (run time), tensorrt_headers (compile time), gpu, gpu_device (CUDA's number),
// gpu_compute_capability, gpu_memory, gpu_pci_bus_id, gpu_uuid, gpu_count (devices
// CUDA sees), driver_version, cuda_driver_version; gpu_note says what is unknown and
// why. `gpu` receives the device found, if any.
Facts TensorRtFacts(int32_t runtime_version, const CudaReport& cuda, const NvmlReport& nvml, int ordinal,
                    std::optional<BuildGpu>* gpu = nullptr);

}  // namespace trtwatch::trt
