// SlurmJobInfo: what Slurm's commands say of one job, parsed strictly from their output.
// Those outputs are untrusted bytes (a cluster's commands, wrappers, a hostile PATH):
// every field is bounded, job ids are digits only, and anything else is refused with a
// text that says what was met. Pure functions, unit-tested without a cluster.
//
// Threading: pure functions of their arguments.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace trtwatch::builds {

// Bounds on what is read of one command's output, and on each field kept from it.
inline constexpr size_t kMaxSlurmOutput = 64 * 1024;
inline constexpr size_t kMaxSlurmField = 256;

struct SlurmJobInfo {
  std::string state;    // JobState: PENDING, RUNNING, COMPLETED, NODE_FAIL, ... (A-Z and _ only)
  std::string reason;   // Reason: Resources, Priority, ... ("" while Slurm says "None")
  std::string node;     // NodeList ("" while pending: Slurm says "(null)")
  std::optional<int> exit_code;    // ExitCode "code:signal"
  std::optional<int> exit_signal;  //   (signal 0: none)
};

struct JobIdResult {
  std::string id;     // digits; empty when refused
  std::string error;  // then: what sbatch printed instead
};
// `sbatch --parsable` prints "ID" or "ID;CLUSTER" and a newline.
JobIdResult ParseSbatchJobId(std::string_view output);
// A job id as the record keeps it: 1 to 20 digits.
bool IsSlurmJobId(std::string_view id);

struct JobInfoResult {
  std::optional<SlurmJobInfo> info;
  bool unknown_job = false;  // Slurm no longer knows the job (purged after MinJobAge)
  std::string error;         // neither: what was met
};
// One line of `scontrol -o show job ID` (fields "Key=Value" separated by spaces; only
// the fields above are read, by their key at a field's start), or its "Invalid job id".
JobInfoResult ParseScontrolJob(std::string_view output, std::string_view job_id);

// Whether Slurm counts the job as over (it will not run again).
bool IsFinalSlurmState(std::string_view state);

// The facts the job script writes when it starts ("node=…", "cuda_visible_devices=…",
// "slurm_job_gpus=…", one a line); unknown keys are ignored, values bounded.
struct JobStartFacts {
  std::string node;
  std::string cuda_visible_devices;
  std::string slurm_job_gpus;
};
std::optional<JobStartFacts> ParseJobStartFacts(std::string_view text);

}  // namespace trtwatch::builds
