// The trtexec-style TensorRT options of `trtwatch build`, registered on its CLI11
// subcommand. Parsing and validation live in backends/tensorrt/build_options.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/build_command.h"

namespace trtwatch {

void AddTensorRtFlags(CLI::App* build, BuildCommandOptions* options);

}  // namespace trtwatch
