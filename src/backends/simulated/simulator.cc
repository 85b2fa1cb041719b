#include "backends/simulated/simulator.h"

#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>
#include <vector>

namespace trtwatch::sim {

SimulatedBackend::SimulatedBackend(Profile profile, SimulationOptions options)
    : profile_(std::move(profile)), options_(options), plan_(MakePlan(profile_, options.seed)) {}

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
  return info;
}

void SimulatedBackend::Work(int64_t us) const {
  if (us <= 0) return;
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(us / options_.speed)));
}

bool SimulatedBackend::RunStep(const PlanPhase& phase, int32_t step, Monitor& monitor) {
  for (const PlanPhase& child : phase.children[step]) {
    if (!RunPhase(child, phase.name.c_str(), monitor)) return false;
  }
  Work(phase.step_us[step]);
  if (phase.fails && step == phase.fail_step && !failed_.exchange(true)) {
    monitor.Log(Severity::kError, plan_.failure_message);
    stop_.store(true);
    return false;
  }
  return !stop_.load();
}

bool SimulatedBackend::RunPhase(const PlanPhase& phase, const char* parent, Monitor& monitor) {
  if (stop_.load()) return false;
  const char* name = phase.name.c_str();
  monitor.phaseStart(name, parent, phase.steps);
  bool ok = true;
  if (phase.workers <= 1) {
    for (int32_t step = 0; ok && step < phase.steps; ++step) {
      ok = RunStep(phase, step, monitor);
      if (ok && !monitor.stepComplete(name, step)) {
        stop_.store(true);
        ok = false;
      }
    }
  } else {
    // Steps handed out to workers; completions are numbered in the order they land,
    // so reported steps rise even though the threads race.
    std::atomic<int32_t> next{0};
    std::atomic<int32_t> completed{0};
    std::vector<std::thread> workers;
    for (int32_t w = 0; w < phase.workers; ++w) {
      workers.emplace_back([&] {
        for (int32_t step = next.fetch_add(1); step < phase.steps && !stop_.load();
             step = next.fetch_add(1)) {
          if (!RunStep(phase, step, monitor)) return;
          if (!monitor.stepComplete(name, completed.fetch_add(1))) {
            stop_.store(true);
            return;
          }
        }
      });
    }
    for (std::thread& t : workers) t.join();
    ok = !stop_.load();
  }
  monitor.phaseFinish(name);
  return ok;
}

BuildOutcome SimulatedBackend::Build(Monitor& monitor) {
  stop_.store(false);
  failed_.store(false);
  monitor.Log(Severity::kInfo, "simulated build of profile \"" + profile_.name +
                                   "\": no TensorRT, no GPU, no engine is written");
  const bool ok = RunPhase(plan_.root, nullptr, monitor);
  if (ok) return BuildOutcome{true, ""};
  if (failed_.load()) return BuildOutcome{false, plan_.failure_message};
  return BuildOutcome{false, ""};  // stopped by cancellation: the monitor knows why
}

}  // namespace trtwatch::sim
