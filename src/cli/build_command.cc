#include "cli/build_command.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "backends/simulated/simulator.h"
#include "backends/tensorrt/factory.h"
#include "keys/simulated_key.h"
#include "keys/tensorrt_key.h"
#include "runner/duration.h"
#include "runner/history_folder.h"
#include "runner/runner.h"

namespace trtwatch {

namespace {

int UsageError(const std::string& message) {
  std::fprintf(stderr, "trtwatch build: %s\n", message.c_str());
  return exit_code::kUsage;
}

// Parses an optional duration flag into `*seconds`; false (and `*error`) if malformed.
bool OptionalDuration(const std::string& flag, const std::string& text, std::optional<double>* seconds,
                      std::string* error) {
  if (text.empty()) return true;
  double value = 0;
  if (!ParseDuration(text, &value, error)) {
    *error = flag + ": " + *error;
    return false;
  }
  *seconds = value;
  return true;
}

// The backend the flags ask for, and in `*key_recipe` what its engine depends on;
// null (and `*error`) on bad input.
std::unique_ptr<Backend> MakeBackend(const BuildCommandOptions& options, keys::RecipeOutcome* key_recipe,
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
    const sim::SimulationOptions simulation{options.seed, options.speed};
    key_recipe->recipe = keys::SimulatedKeyRecipe(*profile, simulation);
    return std::make_unique<sim::SimulatedBackend>(*profile, simulation);
  }
  // Input first (exit 2 with the fix), then whether this binary can build at all.
  trt::BuildOptions trt_options;
  if (!trt::ResolveBuildOptions(options.model, options.output, options.tensorrt, &trt_options, error) ||
      !trt::CheckBuildPaths(trt_options, error)) {
    return nullptr;
  }
  std::unique_ptr<Backend> backend = trt::MakeTensorRtBackend(trt_options, error);
  if (backend) *key_recipe = keys::TensorRtKeyRecipe(trt_options, keys::TargetFromFacts(backend->Describe().facts));
  return backend;
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
  if (!max_size.empty() &&
      !trt::ParseMemorySize(max_size, "--engine-cache-max-size", &flags.limits.max_bytes, &flags.error)) {
    return flags;
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

keys::KeyOutcome BuildKeyFor(const BuildCommandOptions& options) {
  keys::RecipeOutcome recipe;
  std::string error;
  if (!MakeBackend(options, &recipe, &error)) return {std::nullopt, error};
  if (!recipe.recipe) return {std::nullopt, recipe.error};
  return keys::ComputeBuildKey(*recipe.recipe);
}

int RunBuildCommand(const BuildCommandOptions& options) {
  // Everything the user gave is checked before anything starts.
  std::string error;
  keys::RecipeOutcome key_recipe;
  std::unique_ptr<Backend> backend = MakeBackend(options, &key_recipe, &error);
  if (!backend) return UsageError(error);

  RunOptions run;
  run.output = OutputFlags{options.progress, options.color};
  run.events_file = options.events_file;
  run.trace_file = options.trace_file;
  if (!OptionalDuration("--timeout", options.timeout, &run.timeout, &error) ||
      !OptionalDuration("--stall-timeout", options.stall_timeout, &run.stall_timeout, &error) ||
      !OptionalDuration("--kill-after", options.kill_after, &run.kill_after, &error)) {
    return UsageError(error);
  }
  if (options.stall_action != "warn" && options.stall_action != "cancel") {
    return UsageError("--stall-action must be warn or cancel (got \"" + options.stall_action + "\")");
  }
  run.cancel_on_stall = options.stall_action == "cancel";
  const HistoryFolder history = ChooseHistoryFolder(options.history, options.no_history, ProcessEnvironment());
  if (history.outcome == HistoryFolder::Outcome::kUnknown) {
    std::fprintf(stderr, "trtwatch build: warning: no build history: %s\n", history.error.c_str());
  }
  run.history.folder = history.path;
  run.history.limits.max_entries = history.max_entries;
  run.key_recipe = std::move(key_recipe);
  const EngineCacheFlags cache_flags = ResolveEngineCacheFlags(options.engine_cache, options.engine_cache_max_size,
                                                               options.engine_cache_max_entries, options.no_engine_cache);
  if (!cache_flags.error.empty()) return UsageError(cache_flags.error);
  if (!cache_flags.folder.empty()) {
    if (!options.simulate.empty()) {
      // Only an explicit flag is an error: the variable applies to the builds that can use it.
      if (!options.engine_cache.empty()) return UsageError("--engine-cache: a simulated build writes no engine to keep");
    } else if (options.output.empty()) {
      if (!options.engine_cache.empty()) return UsageError("--engine-cache needs -o ENGINE: where to put the engine");
    } else {
      run.engine_cache = RunOptions::EngineCacheUse{cache_flags.folder, options.output, options.model, cache_flags.limits};
    }
  }

  std::unique_ptr<Runner> runner = Runner::Create(std::move(run), &error);
  if (!runner) return UsageError(error);
  return runner->Run(backend->Describe(), [&](Monitor& monitor) { return backend->Build(monitor); }).exit_code;
}

}  // namespace trtwatch
