// SlurmExecutor: each build is one Slurm batch job running `trtwatch build …
// --progress json` on a compute node, through Slurm's own commands: `sbatch --parsable`
// submits (job name trtwatch-BUILD_ID, time limit = the build's timeout + the cancel
// grace, --partition, --account and --slurm-arg as configured), `scontrol -o show job`
// follows its state (a build that asks for a GPU gets the table's GRES type or node
// feature for it, builds/gpu_routing.h), `scancel --full --signal=TERM` asks it to stop (the batch shell
// execs trtwatch, which cancels at TensorRT's next step) and `scancel` forces it. The
// commands run as processes through a CommandRunner (a WorkerLauncher underneath, faked
// in tests), never blocking the event loop; their output is parsed strictly
// (builds/executors/slurm_job_info.h).
//
// The job writes its event stream to JOBS_DIR/BUILD_ID.events.jsonl, its diagnostics
// to .stderr and where it runs (node, CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS) to .facts;
// JOBS_DIR must be on a filesystem the compute nodes share with the service, which tails
// the stream on the event loop. A job outlives the service: stopping the service leaves
// it running, and the next start re-attaches from the record (job id and stream path)
// and follows it to its end. Its end combines the stream with Slurm's state
// (builds/executors/slurm_outcome.h). docs/slurm.md is the user's view.
//
// Threading: as Executor (builds/executors/executor.h).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "builds/executors/command_runner.h"
#include "builds/executors/executor.h"
#include "builds/gpu_routing.h"

namespace boost::asio {
class io_context;
}

namespace trtwatch::builds {

struct SlurmOptions {
  std::string partition;                // --partition; empty: the cluster's default
  std::string account;                  // --account; empty: the user's default
  std::vector<std::string> extra_args;  // more sbatch options (--gres=gpu:1, --mem=…)
  GpuTable gpu_types;                   // --gpu-type: how a build gets the GPU it asks for
  std::string worker_exe;               // trtwatch as the compute nodes reach it
  std::string jobs_dir;                 // shared with the nodes: job scripts, streams
  std::string commands_dir;             // where sbatch, scontrol and scancel are; empty: PATH
  std::chrono::milliseconds state_poll{500};  // scontrol, per job ...
  int max_queries_per_second = 20;            // ... and for all jobs together at most
  std::chrono::milliseconds tail_poll{25};    // the stream file
};

class SlurmExecutor final : public Executor {
 public:
  SlurmExecutor(boost::asio::io_context& io, std::unique_ptr<WorkerLauncher> launcher, SlurmOptions options);
  ~SlurmExecutor() override;

  // Writes the job script into jobs_dir; false with `*error` saying why and what to do.
  bool Prepare(std::string* error);

  GpuCheck CheckGpu(const GpuNeed& need) override { return {options_.gpu_types.Route(need).error}; }
  ExecutionStart Start(const WorkerTask& task, const std::vector<std::string>& args) override;
  void StopLeftover(const WorkerPlace& place) override;  // a job is never stopped for being left
  std::unique_ptr<Execution> Reattach(const WorkerPlace& place) override;
  bool WorkersOutliveService() const override { return true; }

  // sbatch's arguments for `task` (after "sbatch"), up to the job script: for tests and docs.
  std::vector<std::string> SubmitArguments(const WorkerTask& task) const;

 private:
  boost::asio::io_context& io_;
  const SlurmOptions options_;
  CommandRunner runner_;
  std::string script_;  // jobs_dir/trtwatch-job.sh
  // How many jobs its executions follow (they count themselves; event loop's thread only).
  const std::shared_ptr<int> followed_ = std::make_shared<int>(0);
};

}  // namespace trtwatch::builds
