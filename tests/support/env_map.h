// EnvOf: an environment for tests, a map read through the EnvLookup that production code
// takes instead of getenv (runner/output_mode.h).
//
// Threading: the lookup reads its own copy of the map.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "runner/output_mode.h"

namespace trtwatch::testing {

inline EnvLookup EnvOf(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    const auto found = vars.find(std::string(name));
    if (found == vars.end()) return std::nullopt;
    return found->second;
  };
}

}  // namespace trtwatch::testing
