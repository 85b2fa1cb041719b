// `trtwatch mcp` assembled: the builds layer (app/builds_root.h) and the MCP server on
// stdio over it.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trtwatch::app {

struct McpOptions {
  std::string data_dir;
  std::string artifact_dir;  // empty: DATA_DIR/artifacts
  std::vector<std::string> model_roots;
  int max_concurrent = 2;
  int queue_limit = 100;
  double max_build_seconds = 0;  // 0 = no server-wide budget
  std::string version;
  std::function<nlohmann::json()> doctor;
};

// Runs until stdin closes or a signal; returns the exit code (2 for a bad option, with
// a message).
int RunMcp(const McpOptions& options);

}  // namespace trtwatch::app
