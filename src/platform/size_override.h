// COLUMNS / LINES as a terminal size override, read the same way on every platform:
// a positive decimal number below 100000, else 0 (no override).
#pragma once

#include <cstdlib>

namespace trtwatch {

inline int PositiveEnv(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return (*end == '\0' && value > 0 && value < 100000) ? static_cast<int>(value) : 0;
}

}  // namespace trtwatch
