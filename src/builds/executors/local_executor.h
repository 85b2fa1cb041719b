// LocalExecutor: workers as processes of this host, each in a process group of its own
// (platform/worker_process.h), the stream on its stdout and its diagnostics on stderr.
// The cooperative stop is SIGTERM, which `trtwatch build` turns into a cancel at the
// next step; the forced one SIGKILL to the group.
//
// The host's GPUs are build slots (builds/executors/gpu_slots.h): each worker gets a
// free GPU of its own, CUDA_VISIBLE_DEVICES=its UUID (a real build also `--device 0`,
// the only device it then sees; without NVML's UUID, `--device N` in the service's
// numbering), and the record's `job` says which (executor "local"). A build that asks
// for a GPU (builds/gpu_routing.h) gets one that meets it; when all such GPUs are busy
// it waits, its job "PENDING", and starts when one frees. Before each start the driver
// is asked again: a GPU it no longer lists is taken out of service with a warning. A
// host without GPUs runs its builds without any (simulated builds need none).
//
// Threading: as Executor (builds/executors/executor.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "builds/executors/executor.h"
#include "builds/executors/gpu_slots.h"
#include "builds/gpu_routing.h"

namespace trtwatch::builds {

// This host's GPUs as the driver lists them now, or why it could not (partly).
struct HostGpuList {
  std::vector<SlotGpu> gpus;  // CUDA's order
  std::string error;
};

struct LocalGpuOptions {
  GpuTable gpu_types;      // the service's table: which GPUs meet a named type
  std::vector<int> only;   // --gpus: the GPUs builds may use (CUDA's numbers); empty: all
  int builds_per_gpu = 1;  // --builds-per-gpu
};

class LocalExecutor final : public Executor {
 public:
  // The driver's list (CUDA's devices matched to NVML's UUIDs by PCI bus id), or a test's.
  using GpuQuery = std::function<HostGpuList()>;
  static HostGpuList HostGpus();

  // `exe`: the trtwatch program the workers run; `launcher`: the platform's
  // (NewWorkerLauncher) or a test's fake, both on `io`.
  LocalExecutor(boost::asio::io_context& io, std::unique_ptr<WorkerLauncher> launcher, std::string exe,
                LocalGpuOptions gpus = {}, GpuQuery query = HostGpus);
  ~LocalExecutor() override;

  // Asks the driver for the host's GPUs (~0.1 s) and makes the slots; an error when
  // --gpus or --builds-per-gpu is wrong. Done at the first use when not called.
  [[nodiscard]] std::string Prepare();
  // Builds that can hold a GPU at once (0 on a host without GPUs).
  [[nodiscard]] int capacity();

  GpuCheck CheckGpu(const GpuNeed& need) override;
  ExecutionStart Start(const WorkerTask& task, const std::vector<std::string>& args) override;
  void StopLeftover(const WorkerPlace& place) override;

  struct Host;  // what the executor and its executions share (local_executor.cc)

 private:
  const std::shared_ptr<Host> host_;
};

}  // namespace trtwatch::builds
