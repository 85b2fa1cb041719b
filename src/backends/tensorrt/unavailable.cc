// The TensorRT backend of a trtwatch built without TensorRT (CMake found no
// NvInfer.h / libnvinfer / libnvonnxparser).
#include "backends/tensorrt/factory.h"

namespace trtwatch::trt {

CompiledTensorRt CompiledWith() { return {}; }

std::unique_ptr<Backend> MakeTensorRtBackend(const BuildOptions& options, std::string* error) {
  *error = "this trtwatch was built without TensorRT, so it cannot build \"" + options.model +
           "\". Get TensorRT 9, 10 or 11 (NVIDIA's SDK archive, or the libnvinfer-dev and libnvonnxparsers-dev "
           "packages) and rebuild trtwatch with -DTensorRT_ROOT=/path/to/TensorRT (docs/tensorrt.md); "
           "`trtwatch doctor` shows what is installed. Without TensorRT, try a simulated build: "
           "trtwatch build --simulate small-cnn";
  return nullptr;
}

Result<std::string> MergeTensorRtTimingCaches(const std::vector<NamedCache>& caches) {
  (void)caches;
  return Status::Error("these are not simulated timing caches, and this trtwatch was built without TensorRT, so it "
                       "cannot merge TensorRT's: merge them with a trtwatch built with TensorRT (docs/tensorrt.md)");
}

}  // namespace trtwatch::trt
