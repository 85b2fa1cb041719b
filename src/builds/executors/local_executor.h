// LocalExecutor: workers as processes of this host, each in a process group of its own
// (platform/worker_process.h), the stream on its stdout and its diagnostics on stderr.
// The cooperative stop is SIGTERM, which `trtwatch build` turns into a cancel at the
// next step; the forced one SIGKILL to the group. A build that asks for a GPU
// (builds/gpu_routing.h) gets one of this host's that meets it (`--device N`), or is refused.
//
// Threading: as Executor (builds/executors/executor.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "builds/executors/executor.h"
#include "builds/gpu_routing.h"

namespace trtwatch::builds {

class LocalExecutor final : public Executor {
 public:
  // This host's GPUs in CUDA's numbering: the driver's (HostCudaDevices) or a test's.
  using GpuQuery = std::function<std::vector<CudaDevice>()>;
  static std::vector<CudaDevice> HostCudaDevices();

  // `exe`: the trtwatch program the workers run; `launcher`: the platform's
  // (NewWorkerLauncher) or a test's fake; `gpu_types`: the service's table, whose
  // compute capabilities say which of `gpus` meets a named type.
  LocalExecutor(std::unique_ptr<WorkerLauncher> launcher, std::string exe, GpuTable gpu_types = {},
                GpuQuery gpus = HostCudaDevices)
      : launcher_(std::move(launcher)),
        exe_(std::move(exe)),
        gpu_types_(std::move(gpu_types)),
        query_(std::move(gpus)) {}

  GpuCheck CheckGpu(const GpuNeed& need) override;
  ExecutionStart Start(const WorkerTask& task, const std::vector<std::string>& args) override;
  void StopLeftover(const WorkerPlace& place) override;

 private:
  LocalGpuRoute Route(const GpuNeed& need);

  const std::unique_ptr<WorkerLauncher> launcher_;
  const std::string exe_;
  const GpuTable gpu_types_;
  const GpuQuery query_;
  // Asked of the driver once, at the first build that names a GPU (loading CUDA costs
  // ~0.1 s); only the event loop's thread uses an executor.
  std::optional<std::vector<CudaDevice>> gpus_;
};

}  // namespace trtwatch::builds
