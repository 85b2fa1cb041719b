// SimulatedBackend: drives a Monitor with a TensorRT-like build drawn from a profile.
//
// It behaves as TensorRT's builder does towards its progress monitor: phases start
// with their step count, steps complete in order, children run inside their parent's
// steps, phases with workers report from several threads at once, and a false from
// stepComplete makes every active phase finish early and the build return no engine.
// It sleeps through the plan's durations (divided by `speed`), and says in its facts
// and description that it is a simulation: no TensorRT, no GPU, no engine.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "backends/backend.h"
#include "backends/simulated/plan.h"
#include "backends/simulated/profile.h"
#include "backends/simulated/timing_cache.h"
#include "backends/timing_cache_file.h"

namespace trtwatch::sim {

// The GPU a simulated build's timings belong to, unless TRTWATCH_SIMULATED_GPU names one.
inline constexpr char kDefaultSimulatedGpu[] = "simulated GPU";

struct SimulationOptions {
  uint64_t seed = 1;
  double speed = 1.0;  // > 0; 2 runs twice as fast
  // --timing-cache FILE and its flags (backends/timing_cache_file.h): a build given one
  // skips the tactic measurements it holds (backends/simulated/timing_cache.h).
  TimingCacheFlags timing_cache{};
  std::string gpu = kDefaultSimulatedGpu;  // whose timings its cache holds
};

class SimulatedBackend final : public Backend {
 public:
  SimulatedBackend(Profile profile, SimulationOptions options);

  BuildInfo Describe() const override;
  BuildOutcome Build(Monitor& monitor) override;

  const Plan& plan() const { return plan_; }

 private:
  // Runs one phase, in step `parent_step` of `parent`; returns false once the build
  // must stop (cancel or failure). A measurement the timing cache holds is skipped.
  bool RunPhase(const PlanPhase& phase, const PlanPhase* parent, int32_t parent_step, Monitor& monitor);
  bool RunSteps(const PlanPhase& phase, Monitor& monitor);
  bool RunStep(const PlanPhase& phase, int32_t step, Monitor& monitor);
  void Work(int64_t us) const;
  // The build with its --timing-cache file: loaded, then merged into after the build.
  BuildOutcome BuildWithCache(Monitor& monitor);
  BuildOutcome Outcome(bool ok) const;

  const Profile profile_;
  const SimulationOptions options_;
  const Plan plan_;
  // Set by whichever thread first sees the end (a false from stepComplete, or the
  // planned failure); read by every worker between steps. Atomic: many threads.
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  // The build's timing cache while it runs, else null: set before the root phase
  // starts and cleared after it returned, so the worker threads only read it.
  SimTimingCache* cache_ = nullptr;
};

}  // namespace trtwatch::sim
