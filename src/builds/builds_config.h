// BuildsConfig: what `serve` and `mcp` say about their builds — where records live, which
// models may be built, how many builds run and wait, where they run — as the command
// line gives it. The composition root (app/builds_root.h) builds the layer from it; the
// service's options (service/server_options.h) hold it whole, so nothing is copied field
// by field. Plain data: the command line fills it in builds without the service too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trtwatch::builds {

struct BuildsConfig {
  std::string store;  // --store: empty for SQLite in data_dir, or a PostgreSQL URI (builds/stores/open_record_store.h)
  std::string data_dir = "trtwatch-data";
  std::vector<std::string> model_roots;
  std::string artifact_dir;  // uploaded models; empty: DATA_DIR/artifacts
  // The fleet's timing caches (ARTIFACT_DIR/timing-caches, one per TensorRT version and
  // GPU): every build is given its own GPU's, unless its request says otherwise; off
  // with --no-timing-caches. A merge never grows one past the bound.
  bool timing_caches = true;
  uint64_t timing_cache_max_bytes = uint64_t{512} << 20;
  int max_concurrent = 0;  // 0: one build per GPU slot of the local executor (at least 1; 2 with Slurm)
  std::string gpus;        // --gpus "0,2,3": the GPUs the local executor uses; empty: all
  int builds_per_gpu = 1;  // --builds-per-gpu
  int queue_limit = 100;
  // This process among the replicas of its store (builds/replica_name.h); empty:
  // HOSTNAME-PID. Its claims last lease_seconds unless renewed.
  std::string replica;
  double lease_seconds = 15;
  double cancel_grace_seconds = 10;  // --cancel-grace: SIGTERM, then SIGKILL after this long
  // Where builds run: "local" (processes of this host) or "slurm" (batch jobs,
  // builds/executors/slurm_executor.h, with these sbatch options).
  std::string executor = "local";
  std::string slurm_partition;
  std::string slurm_account;
  std::vector<std::string> slurm_args;
  // The GPU types builds may ask for (builds/gpu_routing.h): --gpu-type flags, and a
  // --gpu-types JSON file (or empty).
  std::vector<std::string> gpu_types;
  std::string gpu_types_file;
};

}  // namespace trtwatch::builds
