// The family a phase name is counted under (the service's metrics, build history), so that the
// `phase` label keeps a bounded number of values.
//
// TensorRT puts counters in some phase names ("Building layer 12 of 480", "Tactic 3",
// "Layer[17]"); one label value per such name would grow without bound. The family
// replaces every run of ASCII digits with "N" ("Building layer N of N"), makes the text
// valid UTF-8 and cuts it to a bounded length. (The number of distinct families is
// capped by Metrics, which counts the rest as "other".)
//
// Threading: a pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trtwatch::history {

// Longest family in bytes, before the "…" that marks a cut.
inline constexpr size_t kMaxPhaseFamilyBytes = 120;

// `phase`'s family: valid UTF-8, digit runs folded to "N", at most
// kMaxPhaseFamilyBytes bytes (cut on a character boundary, then "…").
std::string PhaseFamily(std::string_view phase);

}  // namespace trtwatch::history
