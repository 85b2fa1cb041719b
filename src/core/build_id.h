// Build ids: unguessable (128 random bits from the OS), printable, URL-safe.
#pragma once

#include <string>

namespace trtwatch {

// "b_" followed by 32 lowercase hex digits.
std::string NewBuildId();

}  // namespace trtwatch
