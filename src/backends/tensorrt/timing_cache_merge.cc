// `trtwatch timing-cache merge` for TensorRT's caches: ITimingCache::combine, with the
// TensorRT this process loads (factory.h).
#include <memory>

#include "backends/tensorrt/factory.h"
#include "backends/tensorrt/logger_adapter.h"
#include "backends/tensorrt/tensorrt_library.h"
#include "backends/tensorrt/tensorrt_timing_cache.h"

namespace trtwatch::trt {

Result<std::string> MergeTensorRtTimingCaches(const std::vector<NamedCache>& caches) {
  std::string error;
  const LoadedTensorRt* tensorrt = LoadedTensorRt::ForProcess(&error);
  if (!tensorrt) return Status::Error(error);
  LoggerAdapter logger(trtwatch::Severity::kWarning);
  // Declared first, so destroyed last: TensorRT requires a cache to outlive the builder
  // and config that use it.
  std::unique_ptr<TensorRtTimingCache> ops;
  const std::unique_ptr<nvinfer1::IBuilder> builder(tensorrt->CreateBuilder(logger));
  if (!builder) return Status::Error("TensorRT could not create a builder (is a GPU visible?)");
  const std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
  if (!config) return Status::Error("TensorRT could not create a builder config");
  ops = std::make_unique<TensorRtTimingCache>(*config, logger, FormatTensorRtVersion(tensorrt->Version()));
  return MergeTimingCaches(caches, *ops);
}

}  // namespace trtwatch::trt
