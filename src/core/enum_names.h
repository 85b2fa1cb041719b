// Mapping between enums and their protocol names, shared by every enum of the stream.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace trtwatch {

template <class Enum, size_t N>
bool ParseEnumName(const std::array<std::string_view, N>& names, std::string_view name,
                   Enum* out) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) {
      *out = static_cast<Enum>(i);
      return true;
    }
  }
  return false;
}

}  // namespace trtwatch
