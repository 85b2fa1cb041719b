#include "builds/executors/slurm_outcome.h"

#include <csignal>

namespace trtwatch::builds {

namespace {

JobVerdict Verdict(BuildState state, std::string reason, std::string error) {
  return {true, state, std::move(reason), std::move(error)};
}

}  // namespace

JobVerdict JudgeJobEnd(const JobEnd& end, const std::string& job_id) {
  const std::string& s = end.slurm_state;
  const std::string job = "Slurm job " + job_id;
  // A build that reported success wrote its engine: a late kill of the job's shell
  // (Slurm's end racing the worker's exit) does not undo it.
  if (end.stream_finished && end.stream_state == BuildState::kSucceeded) return {};
  if (s == "NODE_FAIL") {
    return Verdict(BuildState::kFailed, "slurm_node_fail",
                   job + " ended NODE_FAIL: its node stopped answering the controller mid-build; submit it again");
  }
  if (s == "PREEMPTED") {
    return Verdict(BuildState::kInterrupted, "slurm_preempted",
                   job + " ended PREEMPTED: a job of higher priority took its resources; submit it again");
  }
  if (s == "TIMEOUT" || s == "DEADLINE") {
    return Verdict(BuildState::kTimedOut, "slurm_time_limit",
                   job + " ended " + s + ": it reached its Slurm time limit (the request's \"timeout\" plus the "
                   "cancel grace, or --slurm-arg=--time or the partition's limit where shorter); raise the one that "
                   "applies");
  }
  if (s == "OUT_OF_MEMORY") {
    return Verdict(BuildState::kFailed, "slurm_out_of_memory",
                   job + " ended OUT_OF_MEMORY: the build used more memory than the job was given; ask for more "
                   "(--slurm-arg=--mem=…)");
  }
  if (s == "CANCELLED" && !end.cancel_asked) {
    return Verdict(BuildState::kCancelled, "slurm_cancelled",
                   job + " ended CANCELLED: it was cancelled outside trtwatch (scancel, or an administrator)");
  }
  // CANCELLED as asked, COMPLETED, FAILED: the stream and the exit code tell the rest.
  if (s.empty() || s == "CANCELLED" || s == "COMPLETED" || s == "FAILED") return {};
  if (end.stream_finished) return {};
  return Verdict(BuildState::kFailed, "slurm_failed",
                 job + " ended " + s + " before the build finished; see the job's diagnostics");
}

WorkerExit SlurmJobExit(const std::string& state, std::optional<int> code, std::optional<int> signal) {
  WorkerExit exit;
  if (signal && *signal != 0) {
    exit.signal = signal;
  } else if (state == "NODE_FAIL" && code.value_or(0) == 0) {
    exit.signal = SIGKILL;
  } else if (code && (*code != 0 || state == "COMPLETED" || state == "FAILED")) {
    exit.code = code;
  }
  if (exit.signal) exit.signal_text = std::to_string(*exit.signal) + (*exit.signal == SIGKILL ? " (SIGKILL)" : "");
  return exit;
}

}  // namespace trtwatch::builds
