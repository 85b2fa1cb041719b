#include "runner/duration.h"

#include <cmath>
#include <cstdlib>

namespace trtwatch {

namespace {

enum class Zero { kRefused, kAllowed };

bool Parse(std::string_view text, Zero zero, double* seconds, std::string* error) {
  const std::string s(text);
  auto fail = [&](const std::string& why) {
    *error = "invalid duration \"" + s + "\": " + why + " (examples: 90, 45s, 1.5m, 2h, 500ms)";
    return false;
  };
  if (s.empty()) return fail("it is empty");
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return fail("it does not start with a number");
  const std::string unit(end);
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "ms") {
    scale = 1e-3;
  } else if (unit == "m") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else if (unit == "d") {
    scale = 86400;
  } else {
    return fail("unknown unit \"" + unit + "\"");
  }
  if (zero == Zero::kAllowed && value == 0) {
    *seconds = 0;
    return true;
  }
  if (!std::isfinite(value) || value <= 0) return fail("it must be greater than zero");
  // Checked after scaling: "1e308h" overflows to infinity, "1e-320ms" to (next to)
  // nothing. Durations are kept to the millisecond; the upper bound keeps every later
  // conversion (to clock ticks) in range.
  constexpr double kMinSeconds = 1e-3;
  constexpr double kMaxSeconds = 365.0 * 86400;
  const double result = value * scale;
  if (!(result >= kMinSeconds)) return fail("it must be greater than zero (1ms at least)");
  if (!(result <= kMaxSeconds)) return fail("it must be at most 365d");
  *seconds = result;
  return true;
}

}  // namespace

bool ParseDuration(std::string_view text, double* seconds, std::string* error) {
  return Parse(text, Zero::kRefused, seconds, error);
}

bool ParseDurationOrZero(std::string_view text, double* seconds, std::string* error) {
  return Parse(text, Zero::kAllowed, seconds, error);
}

std::string DurationText(double seconds) {
  const double ms = std::round(seconds * 1000);
  struct Unit {
    double ms;
    const char* suffix;
  };
  for (const Unit unit : {Unit{86400e3, "d"}, Unit{3600e3, "h"}, Unit{60e3, "m"}, Unit{1e3, "s"}}) {
    if (ms >= unit.ms && std::fmod(ms, unit.ms) == 0) {
      return std::to_string(static_cast<long long>(ms / unit.ms)) + unit.suffix;
    }
  }
  return std::to_string(static_cast<long long>(ms)) + "ms";
}

Status ReadDurationFlags(std::initializer_list<DurationFlag> flags) {
  for (const DurationFlag& f : flags) {
    if (f.text.empty()) continue;
    double value = 0;
    std::string error;
    if (!ParseDuration(f.text, &value, &error)) return Status::Error(std::string(f.flag) + ": " + error);
    *f.seconds = value;
  }
  return OkStatus();
}

}  // namespace trtwatch
