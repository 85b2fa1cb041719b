#include "runner/build_plan.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "backends/simulated/simulator.h"
#include "backends/tensorrt/factory.h"
#include "core/memory_size.h"
#include "core/result.h"
#include "keys/simulated_key.h"
#include "keys/tensorrt_key.h"
#include "runner/duration.h"
#include "runner/history_folder.h"
#include "runner/output_mode.h"
#include "runner/timing_cache_folder.h"

namespace trtwatch {

namespace {

// The --timing-cache flags; `auto` names the folder of the automatic caches: the
// user's, or --timing-cache-dir's.
Result<TimingCacheFlags> TimingCacheOf(const trt::RawBuildFlags& flags) {
  TimingCacheFlags cache{flags.timing_cache, flags.timing_cache_strict, flags.timing_cache_ignore_mismatch};
  if (!flags.timing_cache_max_size.empty()) {
    const MemorySize bound = ParseMemorySize(flags.timing_cache_max_size, "--timing-cache-max-size");
    if (!bound.bytes) return Status::Error(bound.error);
    cache.max_bytes = *bound.bytes;
  }
  const bool automatic = cache.file == kAutoTimingCache;
  if (!flags.timing_cache_dir.empty() && !automatic) {
    return Status::Error("--timing-cache-dir names the folder of --timing-cache auto: give --timing-cache auto too");
  }
  if (flags.no_builder_cache || !automatic) return cache;
  cache.file.clear();
  if (!flags.timing_cache_dir.empty()) {
    cache.auto_folder = flags.timing_cache_dir;
    return cache;
  }
  Result<std::string> folder = AutoTimingCacheFolder(ProcessEnvironment());
  if (!folder.ok()) return folder.status();
  cache.auto_folder = std::move(folder).value();
  return cache;
}

// A simulated build's options: its seed and speed, its timing cache (the TensorRT
// flags', which --noBuilderCache turns off) and the GPU its timings belong to.
Result<sim::SimulationOptions> SimulationOf(const BuildPlanOptions& options) {
  sim::SimulationOptions simulation;
  simulation.seed = options.seed;
  simulation.speed = options.speed;
  if (!options.tensorrt.no_builder_cache) {
    Result<TimingCacheFlags> cache = TimingCacheOf(options.tensorrt);
    if (!cache.ok()) return cache.status();
    simulation.timing_cache = std::move(cache).value();
  }
  if (const char* gpu = std::getenv("TRTWATCH_SIMULATED_GPU"); gpu != nullptr && *gpu != '\0') {
    const std::string_view name(gpu);
    const bool printable = std::all_of(name.begin(), name.end(), [](char c) { return c >= ' ' && c < 0x7f; });
    if (name.size() > 200 || !printable) {
      return Status::Error("TRTWATCH_SIMULATED_GPU must be a GPU's name (printable ASCII, at most 200 characters)");
    }
    simulation.gpu = name;
  }
  return simulation;
}

// The backend the options ask for, and in `*key_recipe` what its engine depends on;
// null (and `*error`) on bad input.
std::unique_ptr<Backend> MakeBackend(const BuildPlanOptions& options, keys::RecipeOutcome* key_recipe,
                                     std::string* error) {
  if (!options.simulate.empty()) {
    if (!options.model.empty()) {
      *error = "give either a model or --simulate PROFILE, not both";
      return nullptr;
    }
    if (!(options.speed > 0)) {
      *error = "--speed must be greater than zero";
      return nullptr;
    }
    std::optional<sim::Profile> profile = sim::LoadProfile(options.simulate, error);
    if (!profile) return nullptr;
    Result<sim::SimulationOptions> simulation = SimulationOf(options);
    if (!simulation.ok()) {
      *error = simulation.error();
      return nullptr;
    }
    key_recipe->recipe = keys::SimulatedKeyRecipe(*profile, *simulation);
    return std::make_unique<sim::SimulatedBackend>(*profile, *simulation);
  }
  // Input first (exit 2 with the fix), then whether this binary can build at all.
  trt::BuildOptions trt_options;
  if (!trt::ResolveBuildOptions(options.model, options.output, options.tensorrt, &trt_options, error) ||
      !trt::CheckBuildPaths(trt_options, error)) {
    return nullptr;
  }
  const Result<TimingCacheFlags> cache = TimingCacheOf(options.tensorrt);
  if (!cache.ok()) {
    *error = cache.error();
    return nullptr;
  }
  trt_options.timing_cache_folder = cache->auto_folder;
  trt_options.timing_cache_max_bytes = cache->max_bytes;
  std::unique_ptr<Backend> backend = trt::MakeTensorRtBackend(trt_options, error);
  if (backend) *key_recipe = keys::TensorRtKeyRecipe(trt_options, keys::TargetFromFacts(backend->Describe().facts));
  return backend;
}

// The time limits and the stall rule; false (and `*error`) on a malformed flag.
bool ResolveLimits(const BuildPlanOptions& options, RunOptions* run, std::string* error) {
  const Status limits = ReadDurationFlags({{"--timeout", options.timeout, &run->timeout},
                                           {"--stall-timeout", options.stall_timeout, &run->stall_timeout},
                                           {"--kill-after", options.kill_after, &run->kill_after}});
  if (!limits.ok()) {
    *error = limits.error();
    return false;
  }
  if (options.stall_action != "warn" && options.stall_action != "cancel") {
    *error = "--stall-action must be warn or cancel (got \"" + options.stall_action + "\")";
    return false;
  }
  run->cancel_on_stall = options.stall_action == "cancel";
  return true;
}

// Where the engine is kept by its key, if anywhere; false (and `*error`) when the flags
// ask for a cache this build cannot use.
bool ResolveEngineCache(const BuildPlanOptions& options, RunOptions* run, std::string* error) {
  const EngineCacheFlags cache_flags =
      ResolveEngineCacheFlags(options.engine_cache, options.engine_cache_max_size, options.engine_cache_max_entries,
                              options.no_engine_cache);
  if (!cache_flags.error.empty()) {
    *error = cache_flags.error;
    return false;
  }
  if (cache_flags.folder.empty()) return true;
  const bool explicit_flag = !options.engine_cache.empty();
  if (!options.simulate.empty()) {
    // Only an explicit flag is an error: the variable applies to the builds that can use it.
    if (explicit_flag) *error = "--engine-cache: a simulated build writes no engine to keep";
    return !explicit_flag;
  }
  if (options.output.empty()) {
    if (explicit_flag) *error = "--engine-cache needs -o ENGINE: where to put the engine";
    return !explicit_flag;
  }
  run->engine_cache = RunOptions::EngineCacheUse{cache_flags.folder, options.output, options.model, cache_flags.limits};
  return true;
}

}  // namespace

EngineCacheFlags ResolveEngineCacheFlags(const std::string& folder_flag, const std::string& max_size,
                                         const std::string& max_entries, bool disabled) {
  EngineCacheFlags flags;
  if (disabled) return flags;
  flags.folder = folder_flag;
  if (flags.folder.empty()) {
    const char* variable = std::getenv(cache::kEngineCacheVariable);
    if (variable != nullptr) flags.folder = variable;
  }
  if (!max_size.empty()) {
    const MemorySize size = ParseMemorySize(max_size, "--engine-cache-max-size");
    if (!size.bytes) {
      flags.error = size.error;
      return flags;
    }
    flags.limits.max_bytes = *size.bytes;
  }
  if (!max_entries.empty()) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(max_entries.c_str(), &end, 10);
    if (end == max_entries.c_str() || *end != '\0' || n == 0 || max_entries[0] == '-') {
      flags.error = "--engine-cache-max-entries must be a whole number of at least 1 (got \"" + max_entries + "\")";
      return flags;
    }
    flags.limits.max_entries = n;
  }
  return flags;
}

keys::KeyOutcome BuildKeyFor(const BuildPlanOptions& options) {
  keys::RecipeOutcome recipe;
  std::string error;
  if (!MakeBackend(options, &recipe, &error)) return {std::nullopt, error};
  if (!recipe.recipe) return {std::nullopt, recipe.error};
  return keys::ComputeBuildKey(*recipe.recipe);
}

BuildPlanOutcome MakeBuildPlan(const BuildPlanOptions& options) {
  BuildPlan plan;
  std::string error;
  keys::RecipeOutcome key_recipe;
  plan.backend = MakeBackend(options, &key_recipe, &error);
  if (!plan.backend) return {std::nullopt, error};
  RunOptions& run = plan.run;
  run.output = OutputFlags{options.progress, options.color};
  run.events_file = options.events_file;
  run.trace_file = options.trace_file;
  if (!ResolveLimits(options, &run, &error)) return {std::nullopt, error};
  const HistoryFolder history = ChooseHistoryFolder(options.history, options.no_history, ProcessEnvironment());
  if (history.outcome == HistoryFolder::Outcome::kUnknown) {
    plan.warnings.push_back("no build history: " + history.error);
  }
  run.history.folder = history.path;
  run.history.limits.max_entries = history.max_entries;
  run.key_recipe = std::move(key_recipe);
  if (!ResolveEngineCache(options, &run, &error)) return {std::nullopt, error};
  return {std::move(plan), ""};
}

}  // namespace trtwatch
