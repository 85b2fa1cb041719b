// `trtwatch build`: options as parsed from the command line, and the run itself. The
// options become a build plan below the front ends (runner/build_plan.h).
#pragma once

#include "runner/build_plan.h"

namespace trtwatch {

// The flags of `trtwatch build` are the build plan's options.
using BuildCommandOptions = BuildPlanOptions;

// Makes the plan from the flags, runs it through the shared runner (runner/runner.h) and
// returns the process exit code (trtwatch::exit_code). Progress goes to stderr; stdout
// carries only the JSON stream in json mode.
int RunBuildCommand(const BuildCommandOptions& options);

}  // namespace trtwatch
