// Durations as users write them, like coreutils `timeout`: "90" (seconds), "1.5m",
// "2h", "500ms", "1d".
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace trtwatch {

// Parses a positive duration into seconds. On failure returns false and sets
// `*error` to a message that names the problem and shows valid forms.
bool ParseDuration(std::string_view text, double* seconds, std::string* error);

// As ParseDuration, and a zero duration ("0", "0s", "0ms") too: for waits where none
// is a meaning of its own (a cancel grace of 0: SIGKILL at once).
bool ParseDurationOrZero(std::string_view text, double* seconds, std::string* error);

// A duration flag of a command (--timeout, --stall-timeout, ...): its name, the text
// given (empty: not given), and where its seconds go.
struct DurationFlag {
  std::string_view flag;
  const std::string& text;
  std::optional<double>* seconds;
};

// Reads each given flag into its seconds, leaving those not given alone; the first
// malformed one is the error, named by its flag.
Status ReadDurationFlags(std::initializer_list<DurationFlag> flags);

// A duration as a user writes it: the shortest form ParseDuration reads back to `seconds`, in the largest unit that
// keeps it exact to a millisecond: 7200 -> "2h", 90 -> "90s", 0.5 -> "500ms".
std::string DurationText(double seconds);

}  // namespace trtwatch
