// `trtwatch serve` assembled: the builds layer (app/builds_root.h), MCP hosted at /mcp,
// and the HTTP service over them.
#pragma once

#include "service/server.h"

namespace trtwatch::app {

// Runs the service until a graceful stop; returns the exit code (2 for a bad option,
// with a message naming the problem and the fix).
int RunServe(const service::ServerOptions& options);

}  // namespace trtwatch::app
