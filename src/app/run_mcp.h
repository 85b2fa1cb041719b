// `trtwatch mcp` assembled: the builds layer (app/builds_root.h) and the MCP server on
// stdio over it.
#pragma once

#include <string>

#include "app/mcp_tools_config.h"
#include "builds/builds_config.h"

namespace trtwatch::app {

// Runs until stdin closes or a signal; returns the exit code (2 for a bad option, with
// a message). `version` is what the server announces.
int RunMcp(const builds::BuildsConfig& config, const McpToolsConfig& tools, const std::string& version);

}  // namespace trtwatch::app
