#include "cli/cache_command.h"

#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "cli/tensorrt_flags.h"
#include "sinks/format.h"

namespace trtwatch {

namespace {

using nlohmann::json;

int Fail(const std::string& message) {
  std::fprintf(stderr, "trtwatch cache: %s\n", message.c_str());
  return exit_code::kUsage;
}

std::string Bytes(uint64_t bytes) {
  char text[32];
  if (bytes >= (uint64_t{1} << 30)) {
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  } else if (bytes >= (uint64_t{1} << 20)) {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  }
  return text;
}

int PrintKey(const CacheCommandOptions& options) {
  const keys::KeyOutcome key = BuildKeyFor(options.build);
  if (!key.key) return Fail("key: " + key.error);
  if (options.json) {
    json parts = json::array();
    for (const keys::KeyPart& part : key.key->parts) parts.push_back({{"name", part.name}, {"value", part.value}});
    std::printf("%s\n", json{{"key", key.key->digest}, {"parts", parts}}.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    return 0;
  }
  for (const keys::KeyPart& part : key.key->parts) std::printf("%s=%s\n", part.name.c_str(), part.value.c_str());
  std::printf("key %s\n", key.key->digest.c_str());
  return 0;
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The quarantined entries after the good ones: a person decides what to do with them.
void PrintQuarantine(const cache::EngineCache& engines, double now) {
  const std::vector<cache::Quarantined> aside = engines.Quarantine();
  if (aside.empty()) return;
  std::printf("\nQUARANTINED (damaged entries moved aside in %s/quarantine; delete them when looked at)\n",
              engines.folder().c_str());
  for (const cache::Quarantined& q : aside) {
    std::printf("%-12s  %-16s  %s: %s\n", q.key.substr(0, 12).c_str(), (FormatAge(now - q.when_unix) + " ago").c_str(),
                q.name.c_str(), q.reason.c_str());
  }
}

int List(cache::EngineCache& engines, bool as_json) {
  const double now = Clock::SystemUnixSeconds();
  const std::vector<cache::CacheEntry> entries = engines.List();
  if (as_json) {
    json list = json::array();
    for (const cache::CacheEntry& e : entries) {
      list.push_back({{"key", e.key}, {"state", "ok"}, {"model", e.model}, {"size", e.size}, {"sha256", e.sha256},
                      {"built_unix", e.built_unix}, {"build_seconds", e.build_seconds}, {"last_used_unix", e.last_used_unix}});
    }
    for (const cache::Quarantined& q : engines.Quarantine()) {
      list.push_back({{"key", q.key}, {"state", "quarantined"}, {"reason", q.reason},
                      {"path", engines.folder() + "/quarantine/" + q.name}, {"quarantined_unix", q.when_unix}});
    }
    std::printf("%s\n", Dump(list).c_str());
    return 0;
  }
  std::printf("%-12s  %10s  %-16s  %9s  %-16s  %s\n", "KEY", "SIZE", "BUILT", "IN", "LAST USED", "MODEL");
  for (const cache::CacheEntry& e : entries) {
    std::printf("%-12s  %10s  %-16s  %9s  %-16s  %s\n", e.key.substr(0, 12).c_str(), Bytes(e.size).c_str(),
                (FormatAge(now - e.built_unix) + " ago").c_str(), FormatDuration(e.build_seconds).c_str(),
                (FormatAge(now - e.last_used_unix) + " ago").c_str(), e.model.c_str());
  }
  PrintQuarantine(engines, now);
  return 0;
}

json CheckToJson(const cache::EntryCheck& c) {
  return {{"key", c.entry.key},
          {"model", c.entry.model},
          {"size", c.entry.size},
          {"state", c.damage.empty() ? "ok" : "damaged"},
          {"damage", c.damage.empty() ? json(nullptr) : json(c.damage)},
          {"quarantined", c.quarantined.empty() ? json(nullptr) : json(c.quarantined)},
          {"error", c.error.empty() ? json(nullptr) : json(c.error)}};
}

// Every entry's every byte against its recorded digest: exit 0 when all are good, 1
// when any is damaged (--repair quarantines those).
int Verify(cache::EngineCache& engines, bool repair, bool as_json) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<cache::EntryCheck> checks = engines.CheckAll(repair);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  uint64_t bytes = 0, damaged = 0;
  json list = json::array();
  for (const cache::EntryCheck& c : checks) {
    bytes += c.entry.size;
    damaged += c.damage.empty() ? 0 : 1;
    if (as_json) {
      list.push_back(CheckToJson(c));
    } else if (!c.damage.empty()) {
      std::printf("damaged  %s  %s: %s%s%s\n", c.entry.key.c_str(), c.entry.model.c_str(), c.damage.c_str(),
                  c.quarantined.empty() ? "" : ("; quarantined in " + c.quarantined).c_str(),
                  c.error.empty() ? "" : ("; " + c.error).c_str());
    }
  }
  if (as_json) {
    std::printf("%s\n", Dump({{"checked", checks.size()}, {"damaged", damaged}, {"bytes", bytes}, {"seconds", seconds},
                              {"entries", list}}).c_str());
  } else {
    std::printf("%zu %s (%s) checked in %s: %llu damaged%s\n", checks.size(), checks.size() == 1 ? "entry" : "entries",
                Bytes(bytes).c_str(),
                FormatDuration(seconds).c_str(), static_cast<unsigned long long>(damaged),
                damaged > 0 && !repair ? " (trtwatch cache verify --repair quarantines them)" : "");
  }
  return damaged > 0 ? exit_code::kFailed : 0;
}

int Stats(cache::EngineCache& engines, bool as_json) {
  const cache::CacheStats s = engines.Stats();
  if (as_json) {
    std::printf("%s\n", json{{"entries", s.entries}, {"bytes", s.bytes}, {"hits", s.hits}, {"misses", s.misses},
                             {"bytes_reused", s.bytes_reused}, {"seconds_saved", s.seconds_saved}}
                            .dump()
                            .c_str());
    return 0;
  }
  const uint64_t lookups = s.hits + s.misses;
  std::printf("engine cache %s\n", engines.folder().c_str());
  std::printf("  entries       %llu (%s)\n", static_cast<unsigned long long>(s.entries), Bytes(s.bytes).c_str());
  std::printf("  hits          %llu of %llu lookups (%.0f%%)\n", static_cast<unsigned long long>(s.hits),
              static_cast<unsigned long long>(lookups), lookups > 0 ? 100.0 * static_cast<double>(s.hits) / static_cast<double>(lookups) : 0.0);
  std::printf("  misses        %llu\n", static_cast<unsigned long long>(s.misses));
  std::printf("  reused        %s of engines\n", Bytes(s.bytes_reused).c_str());
  std::printf("  time saved    %s of builds\n", FormatDuration(s.seconds_saved).c_str());
  return 0;
}

int Remove(cache::EngineCache& engines, const std::string& prefix) {
  if (prefix.size() < 4 || prefix.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return Fail("rm: give a key or at least its first 4 lowercase hex digits (see `trtwatch cache ls`)");
  }
  const std::vector<std::string> removed = engines.Remove(prefix);
  for (const std::string& key : removed) std::printf("removed %s\n", key.c_str());
  if (removed.empty()) {
    std::fprintf(stderr, "trtwatch cache: rm: no entry's key starts with %s (or a build of it is running)\n", prefix.c_str());
    return exit_code::kFailed;
  }
  return 0;
}

}  // namespace

CLI::App* AddCacheCommand(CLI::App& app, CacheCommandOptions* options) {
  CLI::App* cache_cmd = app.add_subcommand("cache", "The engine cache: build keys, entries, hits (docs/cache.md)");
  cache_cmd->require_subcommand(1);
  const std::string folder_help = "The engine cache's folder (default: TRTWATCH_ENGINE_CACHE)";

  options->key = cache_cmd->add_subcommand("key", "Print a build's key and its parts without building");
  options->key->add_option("model", options->build.model, "ONNX model (needs TensorRT, as a build does)");
  options->key->add_option("--simulate", options->build.simulate, "The key of a simulated build of this profile");
  options->key->add_option("--speed", options->build.speed, "Time scale of the simulated build")->default_val(1.0);
  options->key->add_flag("--json", options->json, "One JSON object: key and parts");
  AddTensorRtFlags(options->key, &options->build);

  options->ls = cache_cmd->add_subcommand("ls", "List the cached engines, most recently used first");
  options->stats = cache_cmd->add_subcommand("stats", "Entries, bytes, hits, misses, time saved");
  options->rm = cache_cmd->add_subcommand("rm", "Remove the entries of a key (or its first digits)");
  options->rm->add_option("key", options->prefix, "The key, or at least its first 4 hex digits")->required();
  options->verify = cache_cmd->add_subcommand("verify", "Check every entry's every byte against its recorded digest");
  options->verify->add_flag("--repair", options->repair, "Quarantine the damaged entries (a later build replaces them)");
  options->prune = cache_cmd->add_subcommand("prune", "Remove least recently used entries past the bounds");
  options->prune->add_option("--max-size", options->max_size, "Keep at most this many bytes (e.g. 50G; default 100G)");
  options->prune->add_option("--max-entries", options->max_entries, "Keep at most this many engines (default 1000)");
  for (CLI::App* sub : {options->ls, options->stats, options->rm, options->verify, options->prune}) {
    sub->add_option("--engine-cache", options->folder, folder_help);
  }
  for (CLI::App* sub : {options->ls, options->stats, options->verify}) sub->add_flag("--json", options->json, "JSON on stdout");
  return cache_cmd;
}

int RunCacheCommand(const CacheCommandOptions& options) {
  if (options.key->parsed()) return PrintKey(options);
  const EngineCacheFlags flags = ResolveEngineCacheFlags(options.folder, options.max_size, options.max_entries, false);
  if (!flags.error.empty()) return Fail(flags.error);
  if (flags.folder.empty()) return Fail("name the engine cache: --engine-cache DIR, or set TRTWATCH_ENGINE_CACHE");
  cache::OpenOutcome opened = cache::EngineCache::Open(flags.folder, flags.limits);
  if (!opened.cache) return Fail(opened.error);
  if (options.ls->parsed()) return List(*opened.cache, options.json);
  if (options.stats->parsed()) return Stats(*opened.cache, options.json);
  if (options.rm->parsed()) return Remove(*opened.cache, options.prefix);
  if (options.verify->parsed()) return Verify(*opened.cache, options.repair, options.json);
  for (const std::string& key : opened.cache->Prune(flags.limits)) std::printf("removed %s\n", key.c_str());
  return 0;
}

}  // namespace trtwatch
