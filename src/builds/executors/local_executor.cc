#include "builds/executors/local_executor.h"

namespace trtwatch::builds {

namespace {

// A worker process as an Execution: the stream is its stdout, the diagnostics stderr.
class LocalExecution final : public Execution {
 public:
  explicit LocalExecution(std::unique_ptr<WorkerProcess> process) : process_(std::move(process)) {}

  WorkerPlace place() const override { return {process_->pid(), {}}; }
  void ReadEvents(std::span<char> buffer, ReadHandler handler) override {
    process_->ReadStdout(buffer, std::move(handler));
  }
  void ReadDiagnostics(std::span<char> buffer, ReadHandler handler) override {
    process_->ReadStderr(buffer, std::move(handler));
  }
  std::string DiagnosticsNow(size_t max_bytes) override { return process_->ReadStderrNow(max_bytes); }
  void RequestStop() override { process_->Terminate(); }
  void ForceStop() override { process_->Kill(); }
  std::optional<WorkerExit> Poll() override { return process_->Poll(); }

 private:
  const std::unique_ptr<WorkerProcess> process_;  // kills and reaps its group when dropped early
};

}  // namespace

std::vector<CudaDevice> LocalExecutor::HostCudaDevices() { return QueryCudaDevices().devices; }

LocalGpuRoute LocalExecutor::Route(const GpuNeed& need) {
  if (!gpus_) gpus_ = query_();
  return RouteToLocalGpu(need, gpu_types_, *gpus_);
}

GpuCheck LocalExecutor::CheckGpu(const GpuNeed& need) { return {Route(need).error}; }

ExecutionStart LocalExecutor::Start(const WorkerTask& task, const std::vector<std::string>& args) {
  WorkerSpec spec;
  spec.exe = exe_;
  spec.argv.reserve(args.size() + 3);
  spec.argv.push_back("trtwatch");
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  if (!task.gpu.empty()) {
    const LocalGpuRoute gpu = Route(task.gpu);
    if (!gpu.ordinal) return {nullptr, gpu.error};
    if (task.builds_on_gpu) spec.argv.insert(spec.argv.end(), {"--device", std::to_string(*gpu.ordinal)});
  }
  ExecutionStart start;
  std::unique_ptr<WorkerProcess> process = launcher_->Start(spec, &start.error);
  if (process) start.execution = std::make_unique<LocalExecution>(std::move(process));
  return start;
}

void LocalExecutor::StopLeftover(const WorkerPlace& place) { launcher_->KillLeftover(place.pid); }

}  // namespace trtwatch::builds
