// Build ids: unguessable (128 random bits from the OS), printable, URL-safe.
#pragma once

#include <string>

namespace trtwatch {

// "b_" followed by 32 lowercase hex digits.
std::string NewBuildId();
// "g_" followed by 32 lowercase hex digits: a build group (builds/build_groups.h).
std::string NewGroupId();

}  // namespace trtwatch
