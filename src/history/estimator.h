// The remaining time of a live build, from earlier builds of the same key: a pure
// function of their top-level phase sequences and the live one (docs/history.md).
//
// Not from step fractions: TensorRT's steps say nothing of time (one step can take
// minutes). Each earlier build is aligned with the live one by the phase boundaries
// (starts and ends of top-level phases, in order) both have passed; the time the live
// build took to reach its last matching boundary, over the time the earlier build
// took, scales what the earlier build still needed from there. Time spent since that
// boundary counts down (a silent stretch shortens the estimate), but never below what
// the earlier build needed after its next boundary. When the boundary is the start of
// a phase that announced more or fewer steps than the same phase of the earlier build
// (more layers to time, say), that phase's time is scaled by the ratio: the amount of
// work, known at its start, not the steps' progress. The spread of these predictions,
// widened for having few of them, gives p10, p50 and p90.
//
// Threading: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/build_result.h"
#include "history/history_entry.h"

namespace trtwatch::history {

// Fewer earlier builds than this give no estimate.
inline constexpr size_t kMinEarlierBuilds = 3;

struct EarlierBuild {
  std::vector<PhaseSpan> sequence;
  double elapsed = 0;
};

// The earlier builds an estimate may use, and how they match the live build's key.
struct EarlierBuilds {
  std::vector<EarlierBuild> builds;  // empty when there are fewer than kMinEarlierBuilds
  std::string match = "exact";       // "exact" or "similar"
  int64_t available = 0;             // successful builds of the key found (to say how few)
};

// What makes two keys "similar": the key parts less the GPU's name, the compute
// capability cut to its major, sorted.
Facts WithoutGpuName(const Facts& parts);

// The successful builds of `key` (newest `max_builds`); with too few of them, those of
// a similar key: the same parts except the GPU's name, on a GPU of the same compute
// capability major (another card of the same architecture).
EarlierBuilds SelectEarlierBuilds(const std::vector<HistoryEntry>& entries, const std::string& key,
                                  const Facts& key_parts, size_t max_builds = 20);

// A live top-level phase; `end` unset while it runs.
struct LivePhase {
  std::string family;
  int depth = 0;
  double start = 0;
  std::optional<double> end;
  int32_t steps = 0;
};

// The estimate at `now` seconds into the live build; `remaining` unset when `earlier`
// has too few builds.
Estimate EstimateRemaining(const EarlierBuilds& earlier, const std::vector<LivePhase>& live, double now);

}  // namespace trtwatch::history
