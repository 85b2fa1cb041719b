// `trtwatch mcp`: its command-line options and the run.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "builds/builds_config.h"

namespace trtwatch {

struct McpCommandOptions {
  // The builds' part of `serve`'s options (builds/builds_config.h); here data_dir empty
  // means DefaultMcpDataDir(), and two builds run at once unless --max-concurrent says.
  McpCommandOptions() {
    builds.data_dir.clear();
    builds.max_concurrent = 2;
  }
  builds::BuildsConfig builds;
  std::string max_build_time;  // a duration; empty = none
};

// The user's state folder (platform/state_folder.h: $XDG_STATE_HOME/trtwatch, else
// ~/.local/state/trtwatch; %LOCALAPPDATA%\trtwatch on Windows), else ./trtwatch-data.
std::string DefaultMcpDataDir();

CLI::App* AddMcpCommand(CLI::App& app, McpCommandOptions* options);
int RunMcpCommand(const McpCommandOptions& options);

}  // namespace trtwatch
