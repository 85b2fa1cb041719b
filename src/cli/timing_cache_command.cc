#include "cli/timing_cache_command.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "runner/timing_cache_folder.h"
#include "sinks/format.h"
#include <trtwatch/result.h>

namespace trtwatch {

namespace {

using nlohmann::json;

int TimingCacheUsageError(const std::string& message) {
  std::fprintf(stderr, "trtwatch timing-cache: %s\n", message.c_str());
  return exit_code::kUsage;
}

int ListCaches(const std::string& folder, bool as_json) {
  const std::vector<TimingCacheFile> files = ListTimingCaches(folder);
  if (as_json) {
    json list = json::array();
    for (const TimingCacheFile& f : files) {
      list.push_back({{"name", f.name},
                      {"path", folder + "/" + f.name},
                      {"size", f.size},
                      {"modified_unix", f.modified_unix},
                      {"entries", f.entries ? json(*f.entries) : json(nullptr)},
                      {"builder", f.builder.empty() ? json(nullptr) : json(f.builder)},
                      {"gpu", f.gpu.empty() ? json(nullptr) : json(f.gpu)},
                      {"builds_served", f.served},
                      {"builds_contributed", f.contributed}});
    }
    std::printf("%s\n", list.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("timing caches in %s\n", folder.c_str());
  if (files.empty()) std::printf("  none yet: `trtwatch build ... --timing-cache auto` makes one per GPU\n");
  const double now = Clock::SystemUnixSeconds();
  for (const TimingCacheFile& f : files) {
    const std::string entries = f.entries ? std::to_string(*f.entries) + " entries, " : "";
    std::printf("  %-60s %10llu B  %-16s %sserved %lld builds, %lld merged into it\n", f.name.c_str(),
                static_cast<unsigned long long>(f.size), (FormatAge(now - f.modified_unix) + " ago").c_str(),
                entries.c_str(), static_cast<long long>(f.served), static_cast<long long>(f.contributed));
  }
  return 0;
}

int RemoveCaches(const std::string& folder, const TimingCacheCommandOptions& options) {
  std::vector<std::string> names = options.names;
  if (options.all) {
    for (const TimingCacheFile& f : ListTimingCaches(folder)) names.push_back(f.name);
  }
  if (names.empty() && !options.all) return TimingCacheUsageError("rm: name a cache (`trtwatch timing-cache ls`), or give --all");
  int code = 0;
  for (const std::string& name : names) {
    if (const Status removed = RemoveTimingCache(folder, name); !removed.ok()) {
      std::fprintf(stderr, "trtwatch timing-cache: rm: %s\n", removed.error().c_str());
      code = exit_code::kFailed;
    } else {
      std::printf("removed %s\n", name.c_str());
    }
  }
  return code;
}

}  // namespace

CLI::App* AddTimingCacheCommand(CLI::App& app, TimingCacheCommandOptions* options) {
  CLI::App* command = app.add_subcommand(
      "timing-cache", "The automatic timing caches of --timing-cache auto, one per TensorRT version and GPU");
  command->require_subcommand(1);
  command->add_option("--dir", options->dir,
                      "The caches' folder: a --timing-cache-dir, or a service's ARTIFACT_DIR/timing-caches "
                      "(default: the state folder's)");
  options->ls = command->add_subcommand("ls", "List them: name, size, when last written, entries where known");
  options->ls->add_flag("--json", options->json, "JSON on stdout");
  options->rm = command->add_subcommand("rm", "Remove caches by name (the next build starts a new one)");
  options->rm->add_option("name", options->names, "A cache's name, as `ls` shows it");
  options->rm->add_flag("--all", options->all, "Remove every one");
  return command;
}

int RunTimingCacheCommand(const TimingCacheCommandOptions& options) {
  const Result<std::string> folder =
      options.dir.empty() ? AutoTimingCacheFolder(ProcessEnvironment()) : Result<std::string>(options.dir);
  if (!folder.ok()) return TimingCacheUsageError(folder.error());
  if (options.ls->parsed()) return ListCaches(*folder, options.json);
  return RemoveCaches(*folder, options);
}

}  // namespace trtwatch
