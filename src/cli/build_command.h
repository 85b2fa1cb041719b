// `trtwatch build`: options as parsed from the command line, and the run itself.
#pragma once

#include <cstdint>
#include <string>

#include "backends/tensorrt/build_options.h"
#include "cache/engine_cache.h"
#include "keys/build_key.h"

namespace trtwatch {

struct BuildCommandOptions {
  std::string model;     // MODEL.onnx (TensorRT backend)
  std::string output;    // -o ENGINE
  std::string simulate;  // --simulate PROFILE
  uint64_t seed = 1;
  double speed = 1.0;
  std::string progress = "auto";  // auto|tty|plain|json|quiet (cli/output_mode.h)
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
// nullopt folder when there is none. An error names the flag and the fix.
struct EngineCacheFlags {
  std::string folder;
  cache::CacheLimits limits;
  std::string error;
};
EngineCacheFlags ResolveEngineCacheFlags(const std::string& folder_flag, const std::string& max_size,
                                         const std::string& max_entries, bool disabled);

// The build key of the build the options describe (`trtwatch cache key`): the same
// backend and recipe `trtwatch build` uses, without building.
keys::KeyOutcome BuildKeyFor(const BuildCommandOptions& options);

// Turns the flags into a backend and RunOptions, runs them through the shared runner
// (runner/runner.h) and returns the process exit code (trtwatch::exit_code).
// Progress goes to stderr; stdout carries only the JSON stream in json mode.
int RunBuildCommand(const BuildCommandOptions& options);

}  // namespace trtwatch
