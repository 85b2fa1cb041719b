// Attaching a Watch to TensorRT's builder. Header-only: it compiles against *your*
// TensorRT headers (9.x, 10.x or 11.x), so trtwatch itself needs no TensorRT.
//
//   trtwatch::Watch watch(options);
//   trtwatch::tensorrt::ProgressMonitor monitor(watch);
//   config->setProgressMonitor(&monitor);             // that is the whole attachment
//   trtwatch::tensorrt::Logger logger(watch);         // optional: TensorRT's log lines
//   auto builder = nvinfer1::createInferBuilder(logger);  //   in the stream too
//
// TensorRT 9.x declares IProgressMonitor as a plain abstract class; 10.x and 11.x in
// nvinfer1::v_1_0, deriving from IVersionedInterface whose getInterfaceInfo() TensorRT
// implements itself (applications must not). The adapters use the unversioned names
// and override only the callbacks, so one source fits every shape.
//
// Threading: TensorRT calls both adapters from several of its threads at once; they
// hold nothing but a reference and forward to the thread-safe Watch, which must
// outlive every TensorRT object they are attached to (TensorRT's own rule for its
// monitor and logger).
#pragma once

#include <NvInfer.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include <trtwatch/watch.h>

#if !defined(NV_TENSORRT_MAJOR) || NV_TENSORRT_MAJOR < 9
#error "trtwatch/tensorrt.h needs TensorRT 9 or newer: IProgressMonitor came in TensorRT 9.0"
#endif

namespace trtwatch::tensorrt {

// TensorRT's IProgressMonitor forwarding to any `Target` with the same three methods
// (a Watch; trtwatch's own backend uses it with its core monitor).
template <class Target>
class BasicProgressMonitor final : public nvinfer1::IProgressMonitor {
 public:
  explicit BasicProgressMonitor(Target& target) noexcept : target_(target) {}
  ~BasicProgressMonitor() noexcept override = default;
  BasicProgressMonitor(const BasicProgressMonitor&) = delete;
  BasicProgressMonitor& operator=(const BasicProgressMonitor&) = delete;

  void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept override {
    target_.phaseStart(phaseName, parentPhase, nbSteps);
  }
  bool stepComplete(char const* phaseName, int32_t step) noexcept override {
    return target_.stepComplete(phaseName, step);
  }
  void phaseFinish(char const* phaseName) noexcept override { target_.phaseFinish(phaseName); }

 private:
  Target& target_;
};

using ProgressMonitor = BasicProgressMonitor<Watch>;

// TensorRT's ILogger: lines at `threshold` or more severe become `log` events (and
// error lines the message of a failed build). Pass it to createInferBuilder.
class Logger final : public nvinfer1::ILogger {
 public:
  explicit Logger(Watch& watch, trtwatch::Severity threshold = trtwatch::Severity::kWarning) noexcept
      : watch_(watch), threshold_(threshold) {}

  void log(nvinfer1::ILogger::Severity severity, nvinfer1::AsciiChar const* msg) noexcept override {
    // trtwatch::Severity lists TensorRT's severities in TensorRT's order.
    const auto level = static_cast<std::underlying_type_t<nvinfer1::ILogger::Severity>>(severity);
    const trtwatch::Severity mapped =
        level < 0 || level > static_cast<int>(trtwatch::Severity::kVerbose)
            ? trtwatch::Severity::kVerbose
            : static_cast<trtwatch::Severity>(level);
    if (mapped > threshold_) return;
    watch_.Log(mapped, msg != nullptr ? msg : "");
  }

 private:
  Watch& watch_;
  const trtwatch::Severity threshold_;
};

// The TensorRT headers this code was compiled against, as a build_start fact:
// watch.AddFact("tensorrt_headers", trtwatch::tensorrt::HeaderVersion()).
inline std::string HeaderVersion() {
  return std::to_string(NV_TENSORRT_MAJOR) + "." + std::to_string(NV_TENSORRT_MINOR) + "." +
         std::to_string(NV_TENSORRT_PATCH);
}

// TensorRT as loaded (getInferLibVersion(), which may differ from the headers), as
// "10.3.0": what an engine depends on, so what a build key needs
// (CacheKeySource::tensorrt_version, <trtwatch/engine_cache.h>). 10.x on encode
// major*10000+minor*100+patch, 9.x major*1000+minor*100+patch.
inline std::string RuntimeVersion() {
  const int32_t version = getInferLibVersion();
  if (version <= 0) return "";
  const bool wide = version >= 100000;
  const int32_t major = wide ? version / 10000 : version / 1000;
  const int32_t minor = wide ? (version / 100) % 100 : (version / 100) % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(version % 100);
}

}  // namespace trtwatch::tensorrt
