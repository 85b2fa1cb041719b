#include "core/build_result.h"

#include <array>

#include "core/enum_names.h"

namespace trtwatch {

namespace {
constexpr std::array<std::string_view, 4> kStatusNames = {"succeeded", "failed", "cancelled",
                                                          "timed_out"};
}  // namespace

std::string_view BuildStatusName(BuildStatus status) {
  return kStatusNames[static_cast<size_t>(status)];
}

bool ParseBuildStatus(std::string_view name, BuildStatus* status) {
  return ParseEnumName(kStatusNames, name, status);
}

}  // namespace trtwatch
