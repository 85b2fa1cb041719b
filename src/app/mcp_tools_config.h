// McpToolsConfig: what `serve` and `mcp` tell MCP's tools (mcp::ToolOptions), as the
// command line gives it. A light header: the command line fills it in builds without
// the service too.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>

namespace trtwatch::app {

struct McpToolsConfig {
  double max_build_seconds = 0;            // the server-wide budget of every build; 0 = none
  std::function<nlohmann::json()> doctor;  // what `trtwatch doctor --json` reports
};

}  // namespace trtwatch::app
