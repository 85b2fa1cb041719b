// `trtwatch cache key|ls|stats|rm|verify|prune`: the engine cache from the command line
// (docs/cache.md). `key` takes a build's model and options (or --simulate) and prints
// its build key's parts and digest without building; the others look at, check or trim
// the cache that --engine-cache DIR (or TRTWATCH_ENGINE_CACHE) names.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/build_command.h"

namespace trtwatch {

struct CacheCommandOptions {
  std::string folder;  // --engine-cache DIR
  std::string max_size;
  std::string max_entries;
  std::string prefix;  // rm: the key or its first digits
  bool json = false;
  bool repair = false;  // verify: quarantine the damaged entries
  BuildCommandOptions build;  // key: the build to key
  CLI::App* key = nullptr;
  CLI::App* ls = nullptr;
  CLI::App* stats = nullptr;
  CLI::App* rm = nullptr;
  CLI::App* verify = nullptr;
  CLI::App* prune = nullptr;
};

// Registers `cache` and its subcommands on `app`.
CLI::App* AddCacheCommand(CLI::App& app, CacheCommandOptions* options);
// Runs the subcommand that was parsed; the process exit code.
int RunCacheCommand(const CacheCommandOptions& options);

}  // namespace trtwatch
