// The flags `serve` and `mcp` share for where builds are kept and what they may build:
// --store, --model-root and --artifact-dir, registered (with their help) in one place.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace trtwatch {

struct StorageFlags {
  std::string* store;                     // --store / TRTWATCH_STORE
  std::vector<std::string>* model_roots;  // --model-root (repeatable)
  std::string* artifact_dir;              // --artifact-dir
};

void AddStorageFlags(CLI::App* cmd, const StorageFlags& flags);

}  // namespace trtwatch
