#include "backends/tensorrt/tensorrt_timing_cache.h"

#include <utility>

namespace trtwatch::trt {

namespace {

std::optional<std::string> Bytes(const nvinfer1::ITimingCache& cache) {
  const std::unique_ptr<nvinfer1::IHostMemory> data(cache.serialize());
  if (!data) return std::nullopt;
  return std::string(static_cast<const char*>(data->data()), data->size());
}

}  // namespace

TensorRtTimingCache::TensorRtTimingCache(nvinfer1::IBuilderConfig& config, LoggerAdapter& logger, std::string version)
    : config_(config), logger_(logger), version_(std::move(version)) {}

bool TensorRtTimingCache::Load(std::string_view bytes) {
  cache_.reset(config_.createTimingCache(bytes.empty() ? nullptr : bytes.data(), bytes.size()));
  return cache_ != nullptr;
}

bool TensorRtTimingCache::Attach(bool ignore_mismatch) {
  if (!cache_) return false;
  if (ignore_mismatch && mismatched_) logger_.ClearErrors();  // TensorRT's complaint was answered by the caller
  attached_ = config_.setTimingCache(*cache_, ignore_mismatch);
  mismatched_ = mismatched_ || !attached_;
  return attached_;
}

std::optional<std::string> TensorRtTimingCache::MergedInto(std::string_view current) {
  const nvinfer1::ITimingCache* learnt = config_.getTimingCache();
  const std::unique_ptr<nvinfer1::ITimingCache> merged(config_.createTimingCache(current.data(), current.size()));
  if (!learnt || !merged || !merged->combine(*learnt, /*ignoreMismatch=*/false)) return std::nullopt;
  return Bytes(*merged);
}

std::optional<std::string> TensorRtTimingCache::Serialize() {
  const nvinfer1::ITimingCache* learnt = config_.getTimingCache();
  if (!learnt) return std::nullopt;
  return Bytes(*learnt);
}

}  // namespace trtwatch::trt
