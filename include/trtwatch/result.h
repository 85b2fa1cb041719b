// How a build ended: its status, why it was cancelled, how fast the cancel took
// effect, where the time went, and what `trtwatch build` would exit with.
//
// Plain values: copy them freely, read them from any thread. Names returned by the
// *Name functions are the protocol's (docs/events.md) and stable across versions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trtwatch {

enum class BuildStatus : uint8_t { kSucceeded, kFailed, kCancelled, kTimedOut };

// "succeeded", "failed", "cancelled", "timed_out".
std::string_view BuildStatusName(BuildStatus status);
bool ParseBuildStatus(std::string_view name, BuildStatus* status);

// Why a cancel was requested: a person (kUser), a process signal (kSignal: Ctrl+C,
// SIGTERM), the build's time budget (kTimeout), a silence longer than the stall
// timeout (kStall), a program through an API (kApi), a caller's budget (kBudget); the
// build service's own: a cancel of the build's group (kGroup), a Slurm job stopped by
// Slurm without trtwatch asking (kSlurmCancelled: scancel, an administrator). Appended
// only: a value's number never changes.
enum class CancelReason : uint8_t { kUser, kSignal, kTimeout, kStall, kApi, kBudget, kGroup, kSlurmCancelled };

// "user", "signal", "timeout", "stall", "api", "budget", "group", "slurm_cancelled".
std::string_view CancelReasonName(CancelReason reason);
bool ParseCancelReason(std::string_view name, CancelReason* reason);

// Ordered key/value facts about the backend (TensorRT version, GPU, "simulated").
using Facts = std::vector<std::pair<std::string, std::string>>;

// The build key and the engine cache's part in a build (docs/cache.md). build_start
// and build_finish carry it, and so does the result.
struct CacheUse {
  std::string key;    // the build key's digest (64 hex digits); empty: no key was computed
  std::string state;  // "hit" (an engine was reused), "miss" (built, then stored), "" (no cache)
  // A hit: how long ago the reused engine was built (at the hit) and how long that build took.
  std::optional<double> age_seconds;
  std::optional<double> built_seconds;
};

// Time spent in every phase of one name, over all its instances.
//
// `seconds` is the total: an instance's time includes its children's. `self_seconds` is
// the time no child covered: per instance, its elapsed time less the union of its direct
// children's intervals (phases started with it as their parent, on any thread), so
// children running side by side are not taken out twice and self time is never negative.
struct PhaseSummary {
  std::string phase;
  int64_t count = 0;
  int64_t early = 0;  // instances finished before their last step
  double seconds = 0;
  double self_seconds = 0;  // `seconds` less the time covered by direct children
};

// Callback sequences TensorRT's contract rules out. Counted, never fatal.
struct Anomalies {
  int64_t null_name = 0;             // a callback with a null phase name
  int64_t bad_step_count = 0;        // phaseStart with nbSteps <= 0
  int64_t unknown_parent = 0;        // parent not active; phase attached at the root
  int64_t step_unknown_phase = 0;    // stepComplete for no active phase of that name
  int64_t step_out_of_range = 0;     // step outside [0, nbSteps)
  int64_t finish_unknown_phase = 0;  // phaseFinish for no active phase of that name
  int64_t unfinished_phases = 0;     // still active when the build returned
  int64_t after_build = 0;           // callbacks after the build returned

  int64_t Total() const {
    return null_name + bad_step_count + unknown_parent + step_unknown_phase + step_out_of_range +
           finish_unknown_phase + unfinished_phases + after_build;
  }
};

// Cancel latency, in seconds from the request.
struct CancelLatency {
  std::optional<double> to_first_false;  // until stepComplete first returned false
  double to_return = 0;                  // until the build call returned
};

// The remaining time as trtwatch's history predicts it (docs/history.md): a range from
// the earlier builds of the same build key, never from step counts. `remaining` is
// empty when there is too little history (`builds` says how much there is).
struct Estimate {
  struct Remaining {
    double p10 = 0;  // seconds: 1 build in 10 would need less
    double p50 = 0;
    double p90 = 0;
  };
  std::optional<Remaining> remaining;
  int64_t builds = 0;            // earlier successful builds it is based on
  std::string match = "exact";   // "exact": the same key; "similar": another GPU of the same architecture
  bool longer_than_history = false;  // this build already took longer than any of them
};

// Exit codes of `trtwatch build`, which BuildResult::exit_code follows, so that a
// program embedding trtwatch can exit the way the command line tool does.
namespace exit_code {
inline constexpr int kSucceeded = 0;
inline constexpr int kFailed = 1;
inline constexpr int kUsage = 2;          // bad arguments or input: nothing was built
inline constexpr int kTimedOut = 124;     // the time budget, or a stall with the cancel action
inline constexpr int kInterrupted = 130;  // cancelled by SIGINT (Ctrl+C)
inline constexpr int kKilled = 137;       // kill-after gave up waiting for the builder
inline constexpr int kTerminated = 143;   // cancelled by SIGTERM or SIGHUP
}  // namespace exit_code

struct BuildResult {
  BuildStatus status = BuildStatus::kFailed;
  std::string error;  // why it failed, or the cancel's message
  double elapsed = 0;  // seconds
  std::optional<CancelReason> cancel_reason;
  std::optional<CancelLatency> cancel_latency;
  std::vector<PhaseSummary> phases;  // most time first
  Anomalies anomalies;
  uint64_t events_dropped = 0;  // over all sinks (coalesced steps are not drops)
  CacheUse cache;  // the build key, and whether the engine cache was hit
  std::optional<Estimate> estimate;  // the last estimate the build showed, if history gave one
  int exit_code = exit_code::kFailed;  // what `trtwatch build` exits with for this result

  bool succeeded() const { return status == BuildStatus::kSucceeded; }
};

}  // namespace trtwatch
