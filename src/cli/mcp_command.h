// `trtwatch mcp`: its command-line options and the run.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace trtwatch {

struct McpCommandOptions {
  std::string store;     // --store / TRTWATCH_STORE; empty: SQLite in the data dir
  std::string data_dir;  // empty: DefaultMcpDataDir()
  std::string artifact_dir;  // empty: DATA_DIR/artifacts
  std::vector<std::string> model_roots;
  int max_concurrent = 2;
  int queue_limit = 100;
  std::string replica;  // --replica / TRTWATCH_REPLICA; empty: HOSTNAME-PID
  double lease_seconds = 15;
  std::string max_build_time;  // a duration; empty = none
};

// The user's state folder (platform/state_folder.h: $XDG_STATE_HOME/trtwatch, else
// ~/.local/state/trtwatch; %LOCALAPPDATA%\trtwatch on Windows), else ./trtwatch-data.
std::string DefaultMcpDataDir();

CLI::App* AddMcpCommand(CLI::App& app, McpCommandOptions* options);
int RunMcpCommand(const McpCommandOptions& options);

}  // namespace trtwatch
