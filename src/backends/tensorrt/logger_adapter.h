// LoggerAdapter: TensorRT's nvinfer1::ILogger, turning TensorRT's log lines into
// `log` events on the attached Monitor and remembering the latest errors, which
// become the message of a failed build.
//
// TensorRT may keep using the first logger a process gives it for later builders, so
// one LoggerAdapter lives as long as its backend and is attached to each build's
// Monitor in turn (Attach / Detach).
//
// Threading: log() is called by TensorRT from any of its threads, Attach/Detach and
// RecentErrors from the driver's; every member below is guarded by mu_.
#pragma once

#include <NvInfer.h>

#include <deque>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/monitor.h"
#include "core/mutex.h"

namespace trtwatch::trt {

class LoggerAdapter final : public nvinfer1::ILogger {
 public:
  // Lines less severe than `threshold` are dropped (kWarning by default, kVerbose
  // with --verbose). Errors are always kept for the failure message.
  explicit LoggerAdapter(trtwatch::Severity threshold) : threshold_(threshold) {}

  void log(nvinfer1::ILogger::Severity severity, nvinfer1::AsciiChar const* msg) noexcept override;

  void Attach(Monitor* monitor) EXCLUDES(mu_);  // nullptr detaches
  // The latest error lines (oldest first), at most kKeptErrors.
  std::vector<std::string> RecentErrors() const EXCLUDES(mu_);
  void ClearErrors() EXCLUDES(mu_);

  static trtwatch::Severity MapSeverity(nvinfer1::ILogger::Severity severity);
  static constexpr size_t kKeptErrors = 5;

 private:
  const trtwatch::Severity threshold_;
  mutable Mutex mu_;
  Monitor* monitor_ GUARDED_BY(mu_) = nullptr;
  std::deque<std::string> errors_ GUARDED_BY(mu_);
};

}  // namespace trtwatch::trt
