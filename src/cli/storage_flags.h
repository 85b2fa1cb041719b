// The flags `serve` and `mcp` share for where builds are kept and what they may build:
// --store, --model-root and --artifact-dir, registered (with their help) in one place.
#pragma once

#include <CLI/CLI.hpp>

#include "builds/builds_config.h"

namespace trtwatch {

// --store (or TRTWATCH_STORE), --model-root (repeatable) and --artifact-dir, into `config`.
void AddStorageFlags(CLI::App* cmd, builds::BuildsConfig* config);

}  // namespace trtwatch
