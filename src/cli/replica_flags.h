// The flags that place `serve` and `mcp` among the replicas of one store: --replica and
// --lease-seconds (checked where the builds layer is assembled: app/builds_root.cc).
#pragma once

#include <CLI/CLI.hpp>

#include "builds/builds_config.h"

namespace trtwatch {

// --replica and --lease-seconds, into `config`.
void AddReplicaFlags(CLI::App* cmd, builds::BuildsConfig* config);

}  // namespace trtwatch
