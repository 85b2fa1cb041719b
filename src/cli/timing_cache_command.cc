#include "cli/timing_cache_command.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "backends/simulated/timing_cache.h"
#include "backends/tensorrt/factory.h"
#include "backends/timing_cache_file.h"
#include "core/clock.h"
#include "platform/atomic_file.h"
#include "platform/file_lock.h"
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

// The merge of the caches: the simulator's where the first is one of its caches, else
// TensorRT's (loaded for it).
Result<std::string> MergedCaches(const std::vector<NamedCache>& caches) {
  const Result<sim::TimingCacheData> simulated = sim::ParseTimingCache(caches.front().bytes);
  if (!simulated.ok()) return trt::MergeTensorRtTimingCaches(caches);
  sim::SimTimingCache ops(simulated->maker);
  return MergeTimingCaches(caches, ops);
}

int MergeCaches(const TimingCacheCommandOptions& options) {
  if (options.names.size() < 2) return TimingCacheUsageError("merge: name at least two caches, and -o OUT");
  std::vector<NamedCache> caches;
  for (const std::string& name : options.names) {
    std::string bytes;
    std::string error;
    if (!ReadWholeFile(name, &bytes, &error)) return TimingCacheUsageError("merge: " + error);
    caches.push_back({name, std::move(bytes)});
  }
  const Result<std::string> merged = MergedCaches(caches);
  if (!merged.ok()) {
    std::fprintf(stderr, "trtwatch timing-cache: merge: %s\n", merged.error().c_str());
    return exit_code::kFailed;
  }
  // OUT may be a cache builds use: written under its lock, replaced whole.
  std::string error;
  const std::unique_ptr<FileLock> lock = FileLock::Acquire(TimingCacheLockFile(options.output), &error);
  if (!lock || !WriteFileAtomically(options.output, *merged, &error)) {
    std::fprintf(stderr, "trtwatch timing-cache: merge: %s\n", error.c_str());
    return exit_code::kFailed;
  }
  std::printf("merged %zu caches into %s (%zu bytes)\n", caches.size(), options.output.c_str(), merged->size());
  return 0;
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
  options->merge = command->add_subcommand(
      "merge", "Merge cache files of one GPU and TensorRT version into one (TensorRT's need TensorRT installed)");
  options->merge->add_option("cache", options->names, "A cache file (two or more)")->required();
  options->merge->add_option("-o,--output", options->output, "Where the merged cache goes (may be one of them)")
      ->required();
  return command;
}

int RunTimingCacheCommand(const TimingCacheCommandOptions& options) {
  if (options.merge->parsed()) return MergeCaches(options);
  const Result<std::string> folder =
      options.dir.empty() ? AutoTimingCacheFolder(ProcessEnvironment()) : Result<std::string>(options.dir);
  if (!folder.ok()) return TimingCacheUsageError(folder.error());
  if (options.ls->parsed()) return ListCaches(*folder, options.json);
  return RemoveCaches(*folder, options);
}

}  // namespace trtwatch
