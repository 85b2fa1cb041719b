// The build plan: everything a build decides from its options before anything runs —
// the backend (TensorRT or simulated), what its engine depends on (the build key's
// recipe), and the runner's options (output, time limits, history, engine cache).
// `trtwatch build`, `trtwatch cache key` and the service's workers (which run `trtwatch
// build`) share it; the front ends only parse flags into BuildPlanOptions.
//
// Threading: pure functions of their options and the process environment.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/tensorrt/build_options.h"
#include "cache/engine_cache.h"
#include "keys/build_key.h"
#include "runner/runner.h"

namespace trtwatch {

struct BuildPlanOptions {
  std::string model;     // MODEL.onnx (TensorRT backend)
  std::string output;    // -o ENGINE
  std::string simulate;  // --simulate PROFILE
  uint64_t seed = 1;
  double speed = 1.0;
  std::string progress = "auto";  // auto|tty|plain|json|quiet (runner/output_mode.h)
  std::string color = "auto";     // auto|always|never
  std::string events_file;
  std::string trace_file;         // --trace FILE.json (Chrome Trace Event format)
  std::string timeout;
  std::string kill_after;         // exit 137 this long after a cancel request
  std::string stall_timeout;
  std::string stall_action = "warn";  // warn|cancel
  std::string history;  // --history DIR (docs/history.md); empty: TRTWATCH_HISTORY, the state folder
  bool no_history = false;
  trt::RawBuildFlags tensorrt;  // trtexec-style options (cli/tensorrt_flags.cc)
  std::string engine_cache;             // --engine-cache DIR (default: TRTWATCH_ENGINE_CACHE)
  bool no_engine_cache = false;         // --no-engine-cache: neither
  std::string engine_cache_max_size;    // e.g. 50G
  std::string engine_cache_max_entries;
};

// The engine cache's folder and bounds as the flags and the environment give them;
// empty folder when there is none. An error names the flag and the fix.
struct EngineCacheFlags {
  std::string folder;
  cache::CacheLimits limits;
  std::string error;
};
[[nodiscard]] EngineCacheFlags ResolveEngineCacheFlags(const std::string& folder_flag, const std::string& max_size,
                                                       const std::string& max_entries, bool disabled);

struct BuildPlan {
  std::unique_ptr<Backend> backend;
  RunOptions run;
  std::vector<std::string> warnings;  // for the user, before the build starts
};

// A plan, or (plan unset) the error: the bad option and its fix.
struct BuildPlanOutcome {
  std::optional<BuildPlan> plan;
  std::string error;
};

// Checks everything the options give before anything starts.
[[nodiscard]] BuildPlanOutcome MakeBuildPlan(const BuildPlanOptions& options);

// The build key of the build the options describe (`trtwatch cache key`): the same
// backend and recipe the plan uses, without building.
[[nodiscard]] keys::KeyOutcome BuildKeyFor(const BuildPlanOptions& options);

}  // namespace trtwatch
