// The profiles shipped in profiles/*.json, embedded at build time.
#pragma once

#include <string_view>
#include <vector>

namespace trtwatch::sim {

struct BuiltinProfile {
  std::string_view name;
  std::string_view json;
};

const std::vector<BuiltinProfile>& BuiltinProfiles();

}  // namespace trtwatch::sim
