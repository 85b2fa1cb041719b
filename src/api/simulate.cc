// Simulate (include/trtwatch/simulate.h): the simulated backend driven through a Watch.
#include <trtwatch/simulate.h>

#include <optional>
#include <stdexcept>

#include "backends/simulated/simulator.h"
#include "core/build_session.h"
#include "keys/simulated_key.h"
#include "runner/runner.h"

namespace trtwatch {

BuildResult Simulate(Watch& watch, const SimulateOptions& options) {
  if (!(options.speed > 0)) {
    throw std::invalid_argument("trtwatch::Simulate: speed must be greater than zero (1 is real time)");
  }
  std::string error;
  std::optional<sim::Profile> profile = sim::LoadProfile(options.profile, &error);
  if (!profile) throw std::invalid_argument("trtwatch::Simulate: " + error);
  sim::SimulatedBackend backend(*profile, sim::SimulationOptions{options.seed, options.speed});
  const BuildInfo info = backend.Describe();
  watch.Describe(info.backend, info.model, info.facts);
  keys::RecipeOutcome recipe;
  recipe.recipe = keys::SimulatedKeyRecipe(*profile, sim::SimulationOptions{options.seed, options.speed});
  watch.runner().SetKeyRecipe(std::move(recipe));
  watch.Start();
  const BuildOutcome outcome = CallBuild([&] { return backend.Build(*watch.monitor_); });
  return watch.Finish(outcome.engine_built, outcome.error);
}

std::vector<std::string> SimulationProfiles() { return sim::BuiltinProfileNames(); }

}  // namespace trtwatch
