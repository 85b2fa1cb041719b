#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "builds/executors/local_executor.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <optional>

#include <boost/asio/post.hpp>

#include "backends/timing_cache_file.h"
#include "platform/nvml.h"
#include "platform/process_identity.h"

namespace trtwatch::builds {

// Named, not anonymous: Host (of external linkage) holds pointers to it.
namespace local_execution {
class LocalExecution;
}  // namespace local_execution
using local_execution::LocalExecution;

// Shared by the executor and its executions (an execution may outlive the executor
// when the manager is taken down); no lock: only the event loop's thread uses any of it.
struct LocalExecutor::Host {
  boost::asio::io_context& io;
  std::unique_ptr<WorkerLauncher> launcher;
  std::string exe;
  LocalGpuOptions options;
  GpuQuery query;
  std::optional<GpuSlots> slots;  // made at the first use (Prepare)
  bool had_gpus = false;          // at Prepare: without any, builds run without a GPU
  CudaDevice default_kind;        // the first GPU in service then: what a build that names none gets
  std::deque<LocalExecution*> waiting;  // for a GPU, in the order they came

  void CheckForLostGpus();
  void Dispatch();  // starts the waiting builds that find a free GPU now
};

namespace local_execution {

using Host = LocalExecutor::Host;

constexpr int kLaunchFailedCode = 127;

// A worker: waiting for its GPU, then a process, then ended. Its stream is the
// process's stdout, its diagnostics stderr; reads asked while it waits are passed on
// when it starts (or closed, when it is stopped before).
class LocalExecution final : public Execution {
 public:
  LocalExecution(std::shared_ptr<Host> host, WorkerSpec spec, const WorkerTask& task, GpuSlots::Fits fits)
      : host_(std::move(host)), spec_(std::move(spec)), id_(task.build_id), on_gpu_(task.builds_on_gpu),
        fits_(std::move(fits)) {}
  ~LocalExecution() override {
    std::erase(host_->waiting, this);
    ReleaseGpu();
  }

  const GpuSlots::Fits& fits() const { return fits_; }
  const std::string& id() const { return id_; }
  // Starts the worker on `gpu` (or on none); false with the launcher's error.
  bool Launch(const std::optional<SlotGpu>& gpu, std::string* error);
  // Ends a worker that never started: `why` is its diagnostics.
  void EndUnstarted(WorkerExit exit, std::string why);

  WorkerPlace place() const override { return {process_ ? process_->pid() : 0, job_}; }
  void ReadEvents(std::span<char> buffer, ReadHandler handler) override;
  void ReadDiagnostics(std::span<char> buffer, ReadHandler handler) override;
  std::string DiagnosticsNow(size_t max_bytes) override {
    return process_ ? process_->ReadStderrNow(max_bytes) : why_.substr(0, max_bytes);
  }
  void RequestStop() override;
  void ForceStop() override;
  std::optional<WorkerExit> Poll() override;
  void WatchPlace(std::function<void()> changed) override { watch_ = std::move(changed); }

  void ShowWaiting(const std::string& reason) {
    job_.executor = "local";
    job_.state = "PENDING";
    job_.pending_reason = reason;
  }

 private:
  struct PendingRead {
    std::span<char> buffer;
    ReadHandler handler;
  };
  void ReleaseGpu() {
    if (!holds_gpu_) return;
    holds_gpu_ = false;
    host_->slots->Release(id_);
    boost::asio::post(host_->io, [host = host_] { host->Dispatch(); });
  }
  void Changed() {
    if (watch_) watch_();
  }

  const std::shared_ptr<Host> host_;
  WorkerSpec spec_;
  const std::string id_;
  const bool on_gpu_;
  const GpuSlots::Fits fits_;
  std::unique_ptr<WorkerProcess> process_;
  bool holds_gpu_ = false;
  JobPlace job_;
  std::function<void()> watch_;
  std::optional<PendingRead> events_, diagnostics_;  // asked before the worker started
  std::optional<WorkerExit> unstarted_end_;          // stopped (or failed to start) while it waited
  std::string why_;
};

// The worker's spec on `gpu`: only that GPU visible to it, by UUID where NVML gave one.
// A simulated build simulates that GPU's timing cache (docs/simulator.md).
void PlaceOnGpu(const SlotGpu& gpu, bool builds_on_gpu, WorkerSpec* spec, JobPlace* job) {
  job->executor = "local";
  job->state = "RUNNING";
  job->pending_reason.clear();
  job->node = ThisProcess().host_name;
  job->gpu_pci_bus_id = gpu.device.pci_bus_id;
  const bool by_uuid = !gpu.uuid.empty();
  job->cuda_visible_devices = by_uuid ? gpu.uuid : std::to_string(gpu.device.ordinal);
  // By UUID the worker sees one GPU, its device 0; else CUDA's ordinal.
  if (builds_on_gpu) spec->argv.insert(spec->argv.end(), {"--device", by_uuid ? "0" : job->cuda_visible_devices});
  if (!by_uuid && builds_on_gpu) return;  // the service's own environment
  std::vector<std::string> env = ThisEnvironment();
  std::erase_if(env, [by_uuid](const std::string& e) {
    return (by_uuid && e.starts_with("CUDA_VISIBLE_DEVICES=")) || e.starts_with("TRTWATCH_SIMULATED_GPU=");
  });
  if (by_uuid) env.push_back("CUDA_VISIBLE_DEVICES=" + gpu.uuid);
  if (!builds_on_gpu) {
    env.push_back("TRTWATCH_SIMULATED_GPU=" + TimingCacheGpu(gpu.device.name, gpu.device.cc_major, gpu.device.cc_minor));
  }
  spec->env = std::move(env);
}

bool LocalExecution::Launch(const std::optional<SlotGpu>& gpu, std::string* error) {
  WorkerSpec spec = spec_;
  holds_gpu_ = gpu.has_value();
  if (gpu) PlaceOnGpu(*gpu, on_gpu_, &spec, &job_);
  process_ = host_->launcher->Start(spec, error);
  if (!process_) {
    ReleaseGpu();
    return false;
  }
  if (events_) process_->ReadStdout(events_->buffer, std::move(events_->handler));
  if (diagnostics_) process_->ReadStderr(diagnostics_->buffer, std::move(diagnostics_->handler));
  events_.reset();
  diagnostics_.reset();
  Changed();
  return true;
}

void LocalExecution::EndUnstarted(WorkerExit exit, std::string why) {
  if (process_ || unstarted_end_) return;
  std::erase(host_->waiting, this);
  unstarted_end_ = std::move(exit);
  why_ = std::move(why);
  // Closed on the event loop, never inside the caller's own call into this execution.
  for (std::optional<PendingRead>* read : {&events_, &diagnostics_}) {
    if (!*read) continue;
    boost::asio::post(host_->io, [handler = std::move((*read)->handler)] { handler(0, true); });
    read->reset();
  }
}

void LocalExecution::ReadEvents(std::span<char> buffer, ReadHandler handler) {
  if (process_) return process_->ReadStdout(buffer, std::move(handler));
  if (unstarted_end_) return boost::asio::post(host_->io, [handler = std::move(handler)] { handler(0, true); });
  events_ = PendingRead{buffer, std::move(handler)};
}

void LocalExecution::ReadDiagnostics(std::span<char> buffer, ReadHandler handler) {
  if (process_) return process_->ReadStderr(buffer, std::move(handler));
  if (unstarted_end_) {
    const size_t n = std::min(buffer.size(), why_.size());
    std::copy_n(why_.data(), n, buffer.data());
    return boost::asio::post(host_->io, [handler = std::move(handler), n] { handler(n, true); });
  }
  diagnostics_ = PendingRead{buffer, std::move(handler)};
}

WorkerExit StoppedWhileWaiting(int signal, const char* text) {
  WorkerExit exit;
  exit.signal = signal;
  exit.signal_text = text;
  exit.terminated = signal == 15;
  return exit;
}

void LocalExecution::RequestStop() {
  if (process_) return process_->Terminate();
  EndUnstarted(StoppedWhileWaiting(15, "15 (SIGTERM)"), "");
}

void LocalExecution::ForceStop() {
  if (process_) return process_->Kill();
  EndUnstarted(StoppedWhileWaiting(9, "9 (SIGKILL)"), "");
}

std::optional<WorkerExit> LocalExecution::Poll() {
  if (!process_) return unstarted_end_;
  std::optional<WorkerExit> exit = process_->Poll();
  if (exit) {
    // Said before the GPU goes to the next build, so the records never show two
    // builds running on one GPU (Slurm's words for how a job ended).
    if (holds_gpu_) {
      job_.state = exit->code == 0 ? "COMPLETED" : "FAILED";
      Changed();
    }
    ReleaseGpu();
  }
  return exit;
}

}  // namespace local_execution

void LocalExecutor::Host::CheckForLostGpus() {
  if (!slots || slots->in_service().empty()) return;
  const HostGpuList now = query();
  for (const SlotGpu& gone : slots->TakeOutMissing(now.gpus)) {
    std::fprintf(stderr,
                 "trtwatch serve: warning: %s is gone from the CUDA driver's list%s%s; it is taken out of service "
                 "and builds go to the other GPUs (restart the service once it is back)\n",
                 gone.Describe().c_str(), now.error.empty() ? "" : ": ", now.error.c_str());
  }
}

void LocalExecutor::Host::Dispatch() {
  if (!slots) return;
  for (size_t i = 0; i < waiting.size();) {
    LocalExecution* execution = waiting[i];
    std::optional<SlotGpu> gpu = slots->Take(execution->id(), execution->fits());
    if (!gpu && !slots->AnyFits(execution->fits())) {
      execution->EndUnstarted(WorkerExit{local_execution::kLaunchFailedCode, std::nullopt, "", false},
                              "trtwatch serve: no GPU in service meets this build any more (a GPU was lost)\n");
      continue;  // EndUnstarted took it out of `waiting`
    }
    if (!gpu) {
      ++i;
      continue;
    }
    waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(i));
    std::string error;
    if (!execution->Launch(gpu, &error)) {
      execution->EndUnstarted(WorkerExit{local_execution::kLaunchFailedCode, std::nullopt, "", false}, error + "\n");
    }
  }
}

HostGpuList LocalExecutor::HostGpus() {
  const CudaReport cuda = QueryCudaDevices();
  HostGpuList list{{}, cuda.error};
  if (cuda.devices.empty()) return list;
  const NvmlReport nvml = QueryNvml();
  for (const CudaDevice& device : cuda.devices) {
    const GpuInfo* entry = NvmlEntryFor(nvml, device);
    list.gpus.push_back({device, entry ? entry->uuid : ""});
  }
  return list;
}

LocalExecutor::LocalExecutor(boost::asio::io_context& io, std::unique_ptr<WorkerLauncher> launcher, std::string exe,
                             LocalGpuOptions gpus, GpuQuery query)
    : host_(std::make_shared<Host>(Host{io, std::move(launcher), std::move(exe), std::move(gpus), std::move(query),
                                        std::nullopt, false, {}, {}})) {}

LocalExecutor::~LocalExecutor() = default;

std::string LocalExecutor::Prepare() {
  if (host_->slots) return "";
  GpuSlotsResult made = GpuSlots::Make(host_->query().gpus, host_->options.only, host_->options.builds_per_gpu);
  if (!made.error.empty()) return made.error;
  host_->slots = std::move(made.slots);
  host_->had_gpus = !host_->slots->in_service().empty();
  if (host_->had_gpus) host_->default_kind = host_->slots->in_service().front().device;
  return "";
}

int LocalExecutor::capacity() {
  return Prepare().empty() ? host_->slots->capacity() : 0;
}

namespace {
std::vector<CudaDevice> Devices(const std::vector<SlotGpu>& gpus) {
  std::vector<CudaDevice> devices;
  for (const SlotGpu& g : gpus) devices.push_back(g.device);
  return devices;
}

// The GPUs a build may have: those that meet its need; for a build that names none,
// those of the kind of the first GPU in service (CUDA's device 0 unless --gpus says
// otherwise, where it built before GPUs were slots), so that its engine is for the
// same GPU whichever is free, never for another kind on a host that has two.
GpuSlots::Fits FitsNeed(const GpuNeed& need, const GpuTable& types, const CudaDevice& first) {
  if (!need.empty()) return [need, types](const SlotGpu& g) { return LocalGpuMeets(need, types, g.device); };
  return [first](const SlotGpu& g) {
    return g.device.name == first.name && g.device.cc_major == first.cc_major && g.device.cc_minor == first.cc_minor;
  };
}
}  // namespace

GpuCheck LocalExecutor::CheckGpu(const GpuNeed& need) {
  if (const std::string error = Prepare(); !error.empty()) return {error};
  return {RouteToLocalGpu(need, host_->options.gpu_types, Devices(host_->slots->in_service())).error};
}

ExecutionStart LocalExecutor::Start(const WorkerTask& task, const std::vector<std::string>& args) {
  if (const std::string error = Prepare(); !error.empty()) return {nullptr, error};
  WorkerSpec spec;
  spec.exe = host_->exe;
  spec.argv.reserve(args.size() + 3);
  spec.argv.push_back("trtwatch");
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  host_->CheckForLostGpus();
  const GpuCheck check = task.gpu.empty() ? GpuCheck{} : CheckGpu(task.gpu);
  if (!check.accepted()) return {nullptr, check.error};
  GpuSlots::Fits fits = FitsNeed(task.gpu, host_->options.gpu_types, host_->default_kind);
  if (host_->had_gpus && !host_->slots->AnyFits(fits)) {
    return {nullptr, "no GPU of the kind builds that name none are given (" + host_->default_kind.name +
                         ") is in service any more; name a GPU type in the request, or restart the service"};
  }
  auto execution = std::make_unique<LocalExecution>(host_, std::move(spec), task, std::move(fits));
  ExecutionStart start;
  if (!host_->had_gpus) {  // a host without GPUs: builds run without one
    if (!execution->Launch(std::nullopt, &start.error)) return start;
  } else if (std::optional<SlotGpu> gpu = host_->slots->Take(task.build_id, execution->fits())) {
    if (!execution->Launch(gpu, &start.error)) return start;
  } else {
    execution->ShowWaiting("waiting for a free GPU" + (task.gpu.empty() ? "" : " of " + task.gpu.Describe()));
    host_->waiting.push_back(execution.get());
  }
  start.execution = std::move(execution);
  return start;
}

void LocalExecutor::StopLeftover(const WorkerPlace& place) { host_->launcher->KillLeftover(place.pid); }

}  // namespace trtwatch::builds
