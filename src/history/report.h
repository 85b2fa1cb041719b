// What the history says when looked back at (`trtwatch report`, `trtwatch compare`):
// pure functions of the entries (docs/history.md).
//
// Threading: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "history/history_entry.h"

namespace trtwatch::history {

// A build is a regression when it took this much longer than the median of the
// earlier successful builds of its key (with at least kMinEarlierForRegression of them).
inline constexpr double kRegressionRatio = 1.2;
inline constexpr size_t kMinEarlierForRegression = 3;

struct Durations {
  size_t count = 0;
  double median = 0;
  double p90 = 0;
};

Durations DurationsOf(std::vector<double> seconds);

struct FamilyReport {
  std::string family;
  Durations total;       // seconds in the family per build
  double self_share = 0;  // of the builds' median time, the family's median self time
};

struct Regression {
  std::string build;
  double elapsed = 0;
  double median_before = 0;  // of the key's earlier successful builds
};

struct KeyReport {
  std::string key;
  std::string model;
  std::string backend;
  size_t builds = 0;     // all of them, failed and cancelled ones too
  size_t succeeded = 0;
  Durations elapsed;     // of the successful builds
  // The newest third of the successful builds' median against the oldest third's,
  // as a fraction (+0.12: 12 % slower); unset below 6 successful builds.
  std::optional<double> trend;
  std::vector<FamilyReport> families;  // most self time first
  std::vector<Regression> regressions;
};

// One report per key, the key with the newest build first. `entries` oldest first.
std::vector<KeyReport> Report(const std::vector<HistoryEntry>& entries);

struct FamilyDelta {
  std::string family;
  double before = 0;  // seconds (self time: children counted in their own family)
  double after = 0;
};

struct Comparison {
  std::string before_label;  // "b_12ab…" or "the median of 7 builds"
  std::string after_label;
  double before_elapsed = 0;
  double after_elapsed = 0;
  std::vector<FamilyDelta> families;  // biggest change first
  std::string verdict;                // one line
};

// `after` against `before`, phase family by phase family.
Comparison Compare(const HistoryEntry& before, const std::string& before_label, const HistoryEntry& after,
                   const std::string& after_label);

// An entry that is the median of `entries` (elapsed and each family's times), to
// compare a build against its key's usual; null without entries.
std::optional<HistoryEntry> MedianEntry(const std::vector<const HistoryEntry*>& entries);

struct MedianComparison {
  std::optional<Comparison> comparison;
  std::string error;  // no comparison: there is no other successful build of the key
};

// `after` against the median of the other successful builds of its key in `entries`.
MedianComparison CompareWithKeyMedian(const std::vector<HistoryEntry>& entries, const HistoryEntry& after);

}  // namespace trtwatch::history
