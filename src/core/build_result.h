// What a build is (BuildInfo), what a backend reports back (BuildOutcome) and what
// trtwatch concludes (BuildResult).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/cancellation.h"

namespace trtwatch {

enum class BuildStatus : uint8_t { kSucceeded, kFailed, kCancelled, kTimedOut };

std::string_view BuildStatusName(BuildStatus status);
bool ParseBuildStatus(std::string_view name, BuildStatus* status);

// Ordered key/value facts about the backend (TensorRT version, GPU, "simulated").
using Facts = std::vector<std::pair<std::string, std::string>>;

struct BuildInfo {
  std::string build_id;
  std::string backend;  // "tensorrt" | "simulated" | "replay"
  std::string model;
  Facts facts;
};

// What the backend's build call returned. A cancelled TensorRT build looks like a
// failed one here; the monitor's cancellation record tells them apart.
struct BuildOutcome {
  bool engine_built = false;
  std::string error;
};

// Time spent in every phase of one name, over all its instances.
struct PhaseSummary {
  std::string phase;
  int64_t count = 0;
  int64_t early = 0;  // instances finished before their last step
  double seconds = 0;
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

struct BuildResult {
  BuildStatus status = BuildStatus::kFailed;
  std::string error;
  double elapsed = 0;
  std::optional<CancelReason> cancel_reason;
  std::optional<CancelLatency> cancel_latency;
  std::vector<PhaseSummary> phases;  // most time first
  Anomalies anomalies;
  uint64_t events_dropped = 0;  // over all sinks, filled in when delivery ends
};

}  // namespace trtwatch
