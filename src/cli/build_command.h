// `trtwatch build`: options as parsed from the command line, and the run itself.
#pragma once

#include <cstdint>
#include <string>

#include "backends/tensorrt/build_options.h"

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
};

// Turns the flags into a backend and RunOptions, runs them through the shared runner
// (runner/runner.h) and returns the process exit code (trtwatch::exit_code).
// Progress goes to stderr; stdout carries only the JSON stream in json mode.
int RunBuildCommand(const BuildCommandOptions& options);

}  // namespace trtwatch
