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
  std::string progress = "auto";
  std::string events_file;
  std::string timeout;
  trt::RawBuildFlags tensorrt;  // trtexec-style options (cli/tensorrt_flags.cc)
};

// Runs the build and returns the process exit code (cli/exit_codes.h). Progress goes
// to stderr; stdout carries only the JSON stream in json mode.
int RunBuildCommand(const BuildCommandOptions& options);

}  // namespace trtwatch
