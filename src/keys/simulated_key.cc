#include "keys/simulated_key.h"

#include <charconv>

#include "platform/sha256.h"

namespace trtwatch::keys {

namespace {

// The shortest text that reads back as the same double: 2 and 2.0 are one key.
std::string ShortestText(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

}  // namespace

KeyRecipe SimulatedKeyRecipe(const sim::Profile& profile, const sim::SimulationOptions& options) {
  KeyRecipe recipe;
  recipe.parts = {
      {"backend", "simulated"},
      {"simulate.profile.sha256", HexOf(Sha256Of(profile.source))},
      {"simulate.speed", ShortestText(options.speed)},
  };
  return recipe;
}

}  // namespace trtwatch::keys
