// SlurmOutcome: how a build that ran as a Slurm job ended, from what its event stream
// said and what Slurm says of the job. Slurm's own ends — a node that failed, a
// preemption, Slurm's time limit, an out-of-memory kill, a cancel nobody asked of
// trtwatch — are each recorded as what they were: a status, a distinct reason and
// Slurm's state, never a success nor a generic failure. A pure mapping (docs/slurm.md
// has its table), unit-tested in tests/unit/slurm_outcome_test.cc.
//
// Threading: a pure function.
#pragma once

#include <optional>
#include <string>

#include "builds/build_record.h"
#include "platform/worker_process.h"  // WorkerExit

namespace trtwatch::builds {

struct JobEnd {
  std::string slurm_state;  // JobState once final ("" when Slurm no longer knew the job)
  bool stream_finished = false;       // the stream has its build_finish ...
  BuildState stream_state = BuildState::kFailed;  // ... with this status
  bool cancel_asked = false;          // trtwatch asked it to stop (cancel, or the service stopping)
};

struct JobVerdict {
  bool applies = false;  // false: the stream's (or the worker's exit's) account stands
  BuildState state = BuildState::kFailed;
  std::string reason;  // "slurm_node_fail", "slurm_preempted", "slurm_time_limit", "slurm_out_of_memory",
                       // "slurm_cancelled", "slurm_failed" (a state this mapping does not know)
  std::string error;   // what happened and what to do, naming Slurm's state
};

JobVerdict JudgeJobEnd(const JobEnd& end, const std::string& job_id);

// The worker's exit as a record keeps it, from Slurm's final `state` and its ExitCode
// "code:signal" (sacct(1), JOB EXIT CODES: the signal that ended the process follows
// the colon). A process ended by a signal has no exit code: code none, the signal
// kept. NODE_FAIL reports 0:0, though the job's processes were lost with the node and
// are killed (SIGKILL) where it comes back: signal 9, never exit code 0. Any other end
// of Slurm's own (not COMPLETED nor FAILED) with 0:0 had no exit Slurm saw: neither.
// Without a code and signal from Slurm (none parsed) the result has neither.
WorkerExit SlurmJobExit(const std::string& state, std::optional<int> code, std::optional<int> signal);

}  // namespace trtwatch::builds
