// The key recipe of a simulated build: the profile's JSON text (by its SHA-256) and
// the speed, which scales every duration. The seed is not in it: seeds vary a
// profile's durations the way real builds of one model vary, so history learns
// across them (docs/cache.md).
//
// Pure functions.
#pragma once

#include "backends/simulated/profile.h"
#include "backends/simulated/simulator.h"
#include "keys/build_key.h"

namespace trtwatch::keys {

KeyRecipe SimulatedKeyRecipe(const sim::Profile& profile, const sim::SimulationOptions& options);

}  // namespace trtwatch::keys
