// RunAttached: `trtwatch run -- COMMAND` below the front ends (docs/attach.md). Runs
// COMMAND with trtwatch's attach libraries first on its library path and the channel's
// descriptor in its environment, and watches every TensorRT build in it and its
// children as a build of its own (runner/attached_builds.h) until COMMAND exits.
#pragma once

#include <string>
#include <vector>

#include "runner/runner.h"

namespace trtwatch {

struct AttachedRunOptions {
  // Each build's options. events_file and trace_file may hold "{n}", the build's
  // number; without it, build 2 on writes FILE.2, FILE.3, ...
  RunOptions run;
  std::vector<std::string> command;
  // The folder holding libnvinfer.so.N of trtwatch; empty: `attach/` beside the
  // executable, else TRTWATCH_ATTACH_DIR.
  std::string attach_dir;
  // Non-zero: that major version's attach library also goes on LD_PRELOAD, for
  // programs that load libnvinfer by absolute path (docs/attach.md).
  int preload_major = 0;
};

// COMMAND's exit code, except 124 when --timeout or --stall-timeout cancelled a
// build, 130 when Ctrl+C did; 127 when COMMAND is not found, 126 when it cannot run,
// 2 for bad options.
int RunAttached(AttachedRunOptions options);

// The file of build `number` for a pattern (see AttachedRunOptions::run).
std::string NumberedFile(const std::string& pattern, int number);

}  // namespace trtwatch
