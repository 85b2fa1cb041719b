// `trtwatch mcp`: the MCP server over stdio (one JSON-RPC message per line on stdin
// and stdout; nothing else is ever written to stdout). Builds run through the
// service's build manager and record store in `data_dir`, so `trtwatch serve` on the
// same data dir lists them, and the dashboard shows them.
//
// It ends when stdin closes or on SIGTERM/SIGINT: running builds are cancelled
// cooperatively first.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trtwatch::mcp {

struct StdioOptions {
  std::string data_dir;
  std::vector<std::string> model_roots;
  int max_concurrent = 2;
  int queue_limit = 100;
  double max_build_seconds = 0;  // 0 = no server-wide budget
  std::string version;
  std::function<nlohmann::json()> doctor;
};

// Runs until stdin closes; returns the exit code (2 for a bad option, with a message).
int RunStdioServer(const StdioOptions& options);

}  // namespace trtwatch::mcp
