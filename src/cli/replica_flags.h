// The flags that place `serve` and `mcp` among the replicas of one store: --replica and
// --lease-seconds (checked where the builds layer is assembled: app/builds_root.cc).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace trtwatch {

void AddReplicaFlags(CLI::App* cmd, std::string* replica, double* lease_seconds);

}  // namespace trtwatch
