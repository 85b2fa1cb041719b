// ChainedMonitor: the progress monitor the attach library puts on a build call's
// config. TensorRT's callbacks reach trtwatch's core Monitor and then the program's own
// monitor, if it set one: the program's monitor gets exactly the callbacks it would get
// without trtwatch (steps after a refusal included), and a false from either side
// cancels the build. Compiled per TensorRT major version (attach/abi/nvinfer_abi.h).
#pragma once

#include "attach/abi/nvinfer_abi.h"
#include "core/monitor.h"

namespace trtwatch::attach {

class ChainedMonitor final : public nvinfer1::IProgressMonitor {
 public:
  ChainedMonitor(Monitor& watch, nvinfer1::IProgressMonitor* program) : watch_(watch), program_(program) {}

  void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept override {
    watch_.phaseStart(phaseName, parentPhase, nbSteps);
    if (program_ != nullptr) program_->phaseStart(phaseName, parentPhase, nbSteps);
  }
  bool stepComplete(char const* phaseName, int32_t step) noexcept override {
    const bool watched = watch_.stepComplete(phaseName, step);
    const bool own = program_ == nullptr || program_->stepComplete(phaseName, step);
    return watched && own;
  }
  void phaseFinish(char const* phaseName) noexcept override {
    watch_.phaseFinish(phaseName);
    if (program_ != nullptr) program_->phaseFinish(phaseName);
  }

 private:
  Monitor& watch_;
  nvinfer1::IProgressMonitor* const program_;
};

}  // namespace trtwatch::attach
