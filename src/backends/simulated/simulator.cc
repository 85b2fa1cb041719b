#include "backends/simulated/simulator.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace trtwatch::sim {

namespace {

// The options with the timing cache's file named (--timing-cache auto: this GPU's).
SimulationOptions WithCacheFile(SimulationOptions options) {
  options.timing_cache = trtwatch::WithCacheFile(options.timing_cache, kSimulatedBuilder, options.gpu);
  return options;
}

}  // namespace

SimulatedBackend::SimulatedBackend(Profile profile, SimulationOptions options)
    : profile_(std::move(profile)), options_(WithCacheFile(std::move(options))), plan_(MakePlan(profile_, options_.seed)) {}

BuildInfo SimulatedBackend::Describe() const {
  char speed[32];
  std::snprintf(speed, sizeof speed, "%g", options_.speed);
  BuildInfo info;
  info.backend = "simulated";
  info.model = "simulated:" + profile_.name;
  info.facts = {{"simulated", "true"},
                {"note", "simulated build: no TensorRT and no GPU were used, no engine is written"},
                {"profile", profile_.name},
                {"seed", std::to_string(options_.seed)},
                {"speed", speed},
                {"planned_phases", std::to_string(plan_.phase_count)}};
  if (!options_.timing_cache.file.empty()) {
    info.facts.emplace_back("timing_cache", options_.timing_cache.file);
    info.facts.emplace_back("simulated_gpu", options_.gpu);
  }
  return info;
}

void SimulatedBackend::Work(int64_t us) const {
  if (us <= 0) return;
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(us / options_.speed)));
}

bool SimulatedBackend::RunStep(const PlanPhase& phase, int32_t step, Monitor& monitor) {
  bool cached = false;
  for (const PlanPhase& child : phase.children[step]) {
    if (cache_ && child.name == kMeasuringPhase && cache_->Has(TacticKey{phase.name, step})) {
      cached = true;  // TensorRT reuses the timing: nothing to measure
      continue;
    }
    if (!RunPhase(child, &phase, step, monitor)) return false;
  }
  // A tactic whose timing is cached is taken as it is: TensorRT neither sets it up nor times it.
  if (!cached) Work(phase.step_us[step]);
  if (phase.fails && step == phase.fail_step && !failed_.exchange(true)) {
    monitor.Log(Severity::kError, plan_.failure_message);
    stop_.store(true);
    return false;
  }
  return !stop_.load();
}

bool SimulatedBackend::RunPhase(const PlanPhase& phase, const PlanPhase* parent, int32_t parent_step,
                                Monitor& monitor) {
  if (stop_.load()) return false;
  std::optional<TacticKey> measurement;  // not in the cache (RunStep skips those that are)
  if (cache_ && parent && phase.name == kMeasuringPhase) measurement = TacticKey{parent->name, parent_step};
  const char* name = phase.name.c_str();
  monitor.phaseStart(name, parent ? parent->name.c_str() : nullptr, phase.steps);
  const bool ok = RunSteps(phase, monitor);
  monitor.phaseFinish(name);
  if (ok && measurement) cache_->Learn(std::move(*measurement), phase.total_us);
  return ok;
}

bool SimulatedBackend::RunSteps(const PlanPhase& phase, Monitor& monitor) {
  const char* name = phase.name.c_str();
  if (phase.workers <= 1) {
    for (int32_t step = 0; step < phase.steps; ++step) {
      if (!RunStep(phase, step, monitor)) return false;
      if (!monitor.stepComplete(name, step)) {
        stop_.store(true);
        return false;
      }
    }
    return true;
  }
  // Steps handed out to workers; completions are numbered in the order they land,
  // so reported steps rise even though the threads race.
  std::atomic<int32_t> next{0};
  std::atomic<int32_t> completed{0};
  std::vector<std::thread> workers;
  for (int32_t w = 0; w < phase.workers; ++w) {
    workers.emplace_back([&] {
      for (int32_t step = next.fetch_add(1); step < phase.steps && !stop_.load(); step = next.fetch_add(1)) {
        if (!RunStep(phase, step, monitor)) return;
        if (!monitor.stepComplete(name, completed.fetch_add(1))) {
          stop_.store(true);
          return;
        }
      }
    });
  }
  for (std::thread& t : workers) t.join();
  return !stop_.load();
}

BuildOutcome SimulatedBackend::Outcome(bool ok) const {
  if (ok) return BuildOutcome{true, ""};
  if (failed_.load()) return BuildOutcome{false, plan_.failure_message};
  return BuildOutcome{false, ""};  // stopped by cancellation: the monitor knows why
}

BuildOutcome SimulatedBackend::BuildWithCache(Monitor& monitor) {
  SimTimingCache cache(CacheMaker{kSimulatedBuilder, options_.gpu});
  if (const Status attached = AttachTimingCacheFile(options_.timing_cache, cache, monitor); !attached.ok()) {
    return BuildOutcome{false, attached.error()};
  }
  cache_ = &cache;
  const bool ok = RunPhase(plan_.root, nullptr, 0, monitor);
  cache_ = nullptr;
  monitor.Log(Severity::kInfo, "timing cache: " + std::to_string(cache.hits()) + " tactic measurements reused, " +
                                   std::to_string(cache.learnt()) + " measured");
  // Whatever was measured is kept, also when the build was cancelled (as TensorRT does).
  if (ok || !failed_.load()) SaveTimingCacheFile(options_.timing_cache, cache, monitor);
  return Outcome(ok);
}

BuildOutcome SimulatedBackend::Build(Monitor& monitor) {
  stop_.store(false);
  failed_.store(false);
  monitor.Log(Severity::kInfo, "simulated build of profile \"" + profile_.name +
                                   "\": no TensorRT, no GPU, no engine is written");
  if (!options_.timing_cache.file.empty()) return BuildWithCache(monitor);
  return Outcome(RunPhase(plan_.root, nullptr, 0, monitor));
}

}  // namespace trtwatch::sim
