// TensorRtTimingCache: a build's ITimingCache as the timing-cache file rules see it
// (backends/timing_cache_file.h): made by the builder config from the file's bytes,
// attached to the config, merged into another cache with ITimingCache::combine.
//
// Threading: the build's thread; TensorRT uses the attached cache from its own
// threads while it builds.
#pragma once

#include <NvInfer.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "backends/tensorrt/logger_adapter.h"
#include "backends/timing_cache_file.h"

namespace trtwatch::trt {

class TensorRtTimingCache final : public TimingCacheOps {
 public:
  // `config` and `logger` outlive this object; `version` is TensorRT's run-time
  // version, for messages. TensorRT requires the cache to outlive the builder and
  // config that use it: declare this before them, make it once the config exists.
  TensorRtTimingCache(nvinfer1::IBuilderConfig& config, LoggerAdapter& logger, std::string version);

  bool Load(std::string_view bytes) override;
  bool Attach(bool ignore_mismatch) override;
  std::optional<std::string> MergedInto(std::string_view current) override;
  std::optional<std::string> Serialize() override;
  std::string Reader() const override { return "TensorRT " + version_; }

  bool attached() const { return attached_; }

 private:
  nvinfer1::IBuilderConfig& config_;
  LoggerAdapter& logger_;
  const std::string version_;
  std::unique_ptr<nvinfer1::ITimingCache> cache_;
  bool mismatched_ = false;  // an Attach was refused: TensorRT logged why
  bool attached_ = false;
};

}  // namespace trtwatch::trt
