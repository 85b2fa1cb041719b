// `trtwatch timing-cache ls|rm|merge`: the user's automatic timing caches (`--timing-cache
// auto`, one per builder and GPU, runner/timing_cache_folder.h) from the command line,
// or those of another folder (--dir: a --timing-cache-dir, a service's fleet caches);
// `merge A B... -o OUT` makes one cache of several of one GPU and version.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace trtwatch {

struct TimingCacheCommandOptions {
  std::vector<std::string> names;  // rm; merge: the input files
  std::string output;              // merge -o
  bool all = false;                // rm --all
  bool json = false;               // ls --json
  std::string dir;                 // --dir: the folder; empty: the user's
  CLI::App* ls = nullptr;
  CLI::App* rm = nullptr;
  CLI::App* merge = nullptr;
};

// Registers `timing-cache` and its subcommands on `app`.
CLI::App* AddTimingCacheCommand(CLI::App& app, TimingCacheCommandOptions* options);
// Runs the subcommand that was parsed; the process exit code.
int RunTimingCacheCommand(const TimingCacheCommandOptions& options);

}  // namespace trtwatch
