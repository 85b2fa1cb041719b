#include "core/build_id.h"

#include <cstdio>
#include <random>

namespace trtwatch {

namespace {

std::string NewId(const char* prefix) {
  std::random_device os_random;  // /dev/urandom on Linux
  std::string id = prefix;
  for (int i = 0; i < 4; ++i) {
    char word[9];
    std::snprintf(word, sizeof word, "%08x", static_cast<unsigned>(os_random()));
    id += word;
  }
  return id;
}

}  // namespace

std::string NewBuildId() { return NewId("b_"); }
std::string NewGroupId() { return NewId("g_"); }

}  // namespace trtwatch
