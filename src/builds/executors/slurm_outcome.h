// SlurmOutcome: how a build that ran as a Slurm job ended, from what its event stream
// said and what Slurm says of the job. Slurm's own ends — a node that failed, a
// preemption, Slurm's time limit, an out-of-memory kill, a cancel nobody asked of
// trtwatch — are each recorded as what they were: a status, a distinct reason and
// Slurm's state, never a success nor a generic failure. A pure mapping (docs/slurm.md
// has its table), unit-tested in tests/unit/slurm_outcome_test.cc.
//
// Threading: a pure function.
#pragma once

#include <string>

#include "builds/build_record.h"

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

}  // namespace trtwatch::builds
