#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "app/builds_root.h"

#include <fstream>
#include <sstream>

#include "builds/build_groups.h"
#include "builds/executors/local_executor.h"
#include "builds/executors/slurm_executor.h"
#include "builds/model_paths.h"
#include "builds/replica_name.h"
#include "builds/stores/open_record_store.h"
#include "platform/file_access.h"
#include "core/clock.h"
#include "platform/process_identity.h"

namespace trtwatch::app {

namespace {

constexpr int kDefaultMaxConcurrent = 2;  // builds at once where no GPU count says otherwise

// What is wrong with the builds' limits, or empty.
std::string LimitsError(const builds::BuildsConfig& config) {
  if (config.max_concurrent < 0) return "--max-concurrent must be at least 1";
  if (config.queue_limit < 0) return "--queue-limit must be 0 or more";
  if (!(config.lease_seconds >= 3 && config.lease_seconds <= 300)) {
    return "--lease-seconds must be from 3 to 300 (how long a replica's claim on a build lasts unless renewed)";
  }
  if (config.executor != "local" && config.executor != "slurm") {
    return "--executor must be local or slurm (got \"" + config.executor + "\")";
  }
  if (config.executor == "local" &&
      (!config.slurm_partition.empty() || !config.slurm_account.empty() || !config.slurm_args.empty())) {
    return "--slurm-partition, --slurm-account and --slurm-arg need --executor slurm";
  }
  return config.replica.empty() ? "" : builds::ReplicaNameError(config.replica);
}

// The GPU types of --gpu-type and --gpu-types.
builds::GpuTableResult GpuTypes(const builds::BuildsConfig& config) {
  std::string text;
  if (!config.gpu_types_file.empty()) {
    std::ifstream in(config.gpu_types_file, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    if (!in || content.str().size() > 1024 * 1024) {
      return {{}, "--gpu-types " + config.gpu_types_file + ": cannot read it (a JSON file of at most 1 MiB)"};
    }
    text = content.str();
  }
  return builds::GpuTable::Parse(config.gpu_types, text);
}

// The local executor, its GPUs made slots (--gpus, --builds-per-gpu); and, when
// --max-concurrent was not given, as many builds at once as it has slots; on a host
// without GPUs (simulated builds need none), the former default of 2.
std::unique_ptr<builds::Executor> MakeLocalExecutor(boost::asio::io_context& io, const builds::BuildsConfig& config,
                                                    builds::ManagerOptions& manager, std::string* error) {
  const builds::GpuListResult only = builds::ParseGpuList(config.gpus);
  if (!only.error.empty()) {
    *error = only.error;
    return nullptr;
  }
  auto executor = std::make_unique<builds::LocalExecutor>(
      io, NewWorkerLauncher(io), manager.worker_exe,
      builds::LocalGpuOptions{manager.gpu_types, only.ordinals, config.builds_per_gpu});
  if (*error = executor->Prepare(); !error->empty()) return nullptr;
  if (config.max_concurrent == 0) {
    manager.max_concurrent = executor->capacity() > 0 ? executor->capacity() : kDefaultMaxConcurrent;
  }
  return executor;
}

// The executor builds run on.
std::unique_ptr<builds::Executor> MakeExecutor(boost::asio::io_context& io, const builds::BuildsConfig& config,
                                               builds::ManagerOptions& manager, std::string* error) {
  if (config.executor != "slurm") return MakeLocalExecutor(io, config, manager, error);
  if (!config.gpus.empty() || config.builds_per_gpu != 1) {
    *error = "--gpus and --builds-per-gpu are the local executor's; with --executor slurm, Slurm gives each job its GPU";
    return nullptr;
  }
  if (config.max_concurrent == 0) manager.max_concurrent = kDefaultMaxConcurrent;
  const std::string& data_dir = manager.data_dir;
  builds::SlurmOptions slurm;
  slurm.partition = config.slurm_partition;
  slurm.account = config.slurm_account;
  slurm.extra_args = config.slurm_args;
  slurm.gpu_types = manager.gpu_types;
  slurm.worker_exe = ThisProcess().executable;
  slurm.jobs_dir = data_dir + "/slurm";
  if (slurm.worker_exe.empty()) {
    *error = "--executor slurm: the path of this trtwatch program cannot be found (/proc/self/exe)";
    return nullptr;
  }
  if (!MakePrivateFolder(slurm.jobs_dir, error)) return nullptr;
  auto executor = std::make_unique<builds::SlurmExecutor>(io, NewWorkerLauncher(io), std::move(slurm));
  if (!executor->Prepare(error)) return nullptr;
  return executor;
}

std::string ThisReplica(const builds::BuildsConfig& config) {
  if (!config.replica.empty()) return config.replica;
  const ProcessIdentity self = ThisProcess();
  return builds::DefaultReplicaName(self.host_name, self.pid);
}

}  // namespace

BuildsRoot::Opening BuildsRoot::Open(boost::asio::io_context& io, const builds::BuildsConfig& config,
                                     const McpToolsConfig& tools_config) {
  Opening opening;
  std::string& error = opening.error;
  if (error = LimitsError(config); !error.empty()) return opening;
  builds::ManagerOptions manager_options;
  if (!builds::CanonicalRoots(config.model_roots, &manager_options.model_roots, &error)) return opening;
  std::unique_ptr<BuildsRoot> root(new BuildsRoot());
  builds::StoreOpening store = builds::OpenRecordStore(config.store, config.data_dir);
  if (!store.store) {
    error = std::move(store.error);
    return opening;
  }
  root->store_ = std::move(store.store);
  std::vector<std::string> data_dir;  // canonical, now that the store's opening made it
  if (!builds::CanonicalRoots({config.data_dir}, &data_dir, &error)) return opening;
  manager_options.data_dir = data_dir.front();
  root->artifacts_ = builds::ArtifactStore::Open(
      config.artifact_dir.empty() ? manager_options.data_dir + "/artifacts" : config.artifact_dir, &error);
  if (!root->artifacts_) return opening;
  manager_options.models_dir = root->artifacts_->models_dir();
  if (config.timing_caches) manager_options.timing_caches_dir = root->artifacts_->timing_caches_dir();
  manager_options.timing_cache_max_bytes = config.timing_cache_max_bytes;
  manager_options.max_concurrent = config.max_concurrent;
  manager_options.queue_limit = config.queue_limit;
  manager_options.cancel_grace_seconds = config.cancel_grace_seconds;
  manager_options.replica = ThisReplica(config);
  // Replicas of one service are told apart in /metrics; one on its own disk needs no label.
  if (root->store_->changes() != nullptr) root->metrics_.LabelReplica(manager_options.replica);
  manager_options.lease_seconds = config.lease_seconds;
  builds::GpuTableResult gpu_types = GpuTypes(config);
  if (!gpu_types.error.empty()) {
    error = std::move(gpu_types.error);
    return opening;
  }
  manager_options.gpu_types = std::move(gpu_types.table);
  std::unique_ptr<builds::Executor> executor = MakeExecutor(io, config, manager_options, &error);
  if (!executor) return opening;
  // The one clock of the builds layer: tests give theirs (tests/support/fake_clock.h).
  root->manager_ = std::make_unique<builds::BuildManager>(io, *root->store_, root->metrics_, manager_options,
                                                          std::move(executor), SteadyClock::Instance());
  root->audit_ = std::make_unique<builds::AuditLog>(*root->store_, SteadyClock::Instance(), root->metrics_);
  root->groups_ =
      std::make_unique<builds::BuildGroups>(*root->manager_, manager_options.data_dir, manager_options.gpu_types);
  root->builds_ = std::make_unique<mcp::ManagerBuilds>(*root->manager_, *root->store_, *root->audit_);
  mcp::ToolOptions tools;
  tools.max_build_seconds = tools_config.max_build_seconds;
  tools.doctor = tools_config.doctor;
  root->tools_ = std::make_unique<mcp::Tools>(io, *root->builds_, tools);
  opening.root = std::move(root);
  return opening;
}

BuildsRoot::~BuildsRoot() {
  if (tools_) tools_->Stop();  // its watches unsubscribe from the manager
  tools_.reset();
  builds_.reset();
  groups_.reset();
  manager_.reset();  // workers and their pipes go before the store and the event loop
}

}  // namespace trtwatch::app
