#include "backends/tensorrt/logger_adapter.h"

namespace trtwatch::trt {

trtwatch::Severity LoggerAdapter::MapSeverity(nvinfer1::ILogger::Severity severity) {
  switch (severity) {
    case nvinfer1::ILogger::Severity::kINTERNAL_ERROR:
      return trtwatch::Severity::kInternalError;
    case nvinfer1::ILogger::Severity::kERROR:
      return trtwatch::Severity::kError;
    case nvinfer1::ILogger::Severity::kWARNING:
      return trtwatch::Severity::kWarning;
    case nvinfer1::ILogger::Severity::kINFO:
      return trtwatch::Severity::kInfo;
    case nvinfer1::ILogger::Severity::kVERBOSE:
      return trtwatch::Severity::kVerbose;
  }
  return trtwatch::Severity::kVerbose;  // a level newer than this code: least severe
}

void LoggerAdapter::log(nvinfer1::ILogger::Severity severity, nvinfer1::AsciiChar const* msg) noexcept {
  const trtwatch::Severity ours = MapSeverity(severity);
  // Severity is ordered most severe first, as in TensorRT.
  const bool is_error = ours <= trtwatch::Severity::kError;
  if (!is_error && ours > threshold_) return;
  try {
    const std::string_view text = msg != nullptr ? std::string_view(msg) : std::string_view("(null message)");
    MutexLock lock(&mu_);
    if (is_error) {
      errors_.emplace_back(text);
      if (errors_.size() > kKeptErrors) errors_.pop_front();
    }
    if (monitor_ != nullptr && ours <= threshold_) monitor_->Log(ours, text);
  } catch (...) {
    // Out of memory while logging: the line is lost, the build goes on.
  }
}

void LoggerAdapter::Attach(Monitor* monitor) {
  MutexLock lock(&mu_);
  monitor_ = monitor;
}

std::vector<std::string> LoggerAdapter::RecentErrors() const {
  MutexLock lock(&mu_);
  return {errors_.begin(), errors_.end()};
}

void LoggerAdapter::ClearErrors() {
  MutexLock lock(&mu_);
  errors_.clear();
}

}  // namespace trtwatch::trt
