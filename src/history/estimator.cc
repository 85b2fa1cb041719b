#include "history/estimator.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace trtwatch::history {

Facts WithoutGpuName(const Facts& parts) {
  Facts kept;
  for (const auto& part : parts) {
    if (part.first == "gpu.name") continue;
    if (part.first == "gpu.compute_capability") {
      kept.emplace_back(part.first, part.second.substr(0, part.second.find('.')));  // the major
    } else {
      kept.push_back(part);
    }
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

namespace {

// Relative uncertainty the spread of the earlier builds cannot show: how much the rest
// of a build varies beyond its pace so far (calibrated by bench/eta_calibration.py).
constexpr double kFloorSpread = 0.1;
constexpr double kZ90 = 1.2816;
constexpr double kSmallestSeconds = 0.05;  // a prediction of 0 on a log scale  // the standard normal's 90th percentile
// The pace of the live build against an earlier one counts once the earlier one had
// this share of its time behind it, and within these bounds (one odd phase must not
// make a build look 10x slower).
constexpr double kMinPaceShare = 0.01;
constexpr double kMinPace = 1.0 / 3;
constexpr double kMaxPace = 3.0;

// A start or an end of a top-level phase, in time order.
struct Boundary {
  double t = 0;
  bool end = false;
  int depth = 0;
  std::string family;
  int32_t steps = 0;      // a start's announced steps
  double phase_end = 0;   // a start's phase's end (earlier builds only)

  bool SameAs(const Boundary& other) const {
    return end == other.end && depth == other.depth && family == other.family;
  }
};

void SortBoundaries(std::vector<Boundary>* boundaries) {
  // At one instant: ends first, deeper ends before shallower, starts shallow first.
  std::stable_sort(boundaries->begin(), boundaries->end(), [](const Boundary& a, const Boundary& b) {
    return std::make_tuple(a.t, !a.end, a.end ? -a.depth : a.depth) <
           std::make_tuple(b.t, !b.end, b.end ? -b.depth : b.depth);
  });
}

std::vector<Boundary> BoundariesOf(const std::vector<PhaseSpan>& sequence) {
  std::vector<Boundary> boundaries;
  for (const PhaseSpan& span : sequence) {
    boundaries.push_back(Boundary{span.start, false, span.depth, span.family, span.steps, span.end});
    boundaries.push_back(Boundary{span.end, true, span.depth, span.family, 0, 0});
  }
  SortBoundaries(&boundaries);
  return boundaries;
}

std::vector<Boundary> BoundariesOf(const std::vector<LivePhase>& live) {
  std::vector<Boundary> boundaries;
  for (const LivePhase& phase : live) {
    boundaries.push_back(Boundary{phase.start, false, phase.depth, phase.family, phase.steps, 0});
    if (phase.end) boundaries.push_back(Boundary{*phase.end, true, phase.depth, phase.family, 0, 0});
  }
  SortBoundaries(&boundaries);
  return boundaries;
}

// What `build` predicts the live build still needs at `now`.
double Predict(const EarlierBuild& build, const std::vector<Boundary>& live, double now) {
  const std::vector<Boundary> earlier = BoundariesOf(build.sequence);
  size_t matched = 0;
  while (matched < live.size() && matched < earlier.size() && live[matched].SameAs(earlier[matched])) ++matched;
  const double live_anchor = matched > 0 ? live[matched - 1].t : 0;
  const double earlier_anchor = matched > 0 ? earlier[matched - 1].t : 0;
  const double earlier_next = matched < earlier.size() ? earlier[matched].t : build.elapsed;
  double pace = 1;
  if (earlier_anchor >= kMinPaceShare * build.elapsed && live_anchor > 0) {
    pace = std::clamp(live_anchor / earlier_anchor, kMinPace, kMaxPace);
  }
  // Still to come in the earlier build after its anchor, with the phase the anchor
  // starts scaled by the work it announced.
  double to_come = build.elapsed - earlier_anchor;
  if (matched > 0 && !earlier[matched - 1].end && earlier[matched - 1].steps > 0 && live[matched - 1].steps > 0) {
    const double work = static_cast<double>(live[matched - 1].steps) / earlier[matched - 1].steps;
    to_come += (work - 1) * (earlier[matched - 1].phase_end - earlier_anchor);
  }
  const double counted_down = pace * to_come - (now - live_anchor);
  const double after_next = pace * std::max(0.0, build.elapsed - earlier_next);
  return std::max({counted_down, after_next, 0.0});
}

double Quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (position - static_cast<double>(below));
}

bool SameExceptGpuName(const Facts& a, const Facts& b) { return WithoutGpuName(a) == WithoutGpuName(b); }

std::vector<EarlierBuild> Newest(const std::vector<const HistoryEntry*>& entries, size_t max_builds) {
  std::vector<EarlierBuild> builds;
  const size_t first = entries.size() > max_builds ? entries.size() - max_builds : 0;
  for (size_t i = first; i < entries.size(); ++i) builds.push_back(EarlierBuild{entries[i]->sequence, entries[i]->elapsed});
  return builds;
}

}  // namespace

EarlierBuilds SelectEarlierBuilds(const std::vector<HistoryEntry>& entries, const std::string& key,
                                  const Facts& key_parts, size_t max_builds) {
  std::vector<const HistoryEntry*> exact;
  std::vector<const HistoryEntry*> similar;
  for (const HistoryEntry& entry : entries) {
    if (entry.status != BuildStatus::kSucceeded) continue;
    if (entry.key == key) {
      exact.push_back(&entry);
      similar.push_back(&entry);
    } else if (!key_parts.empty() && SameExceptGpuName(entry.key_parts, key_parts)) {
      similar.push_back(&entry);
    }
  }
  EarlierBuilds earlier;
  earlier.available = static_cast<int64_t>(exact.size());
  if (exact.size() >= kMinEarlierBuilds) {
    earlier.builds = Newest(exact, max_builds);
  } else if (similar.size() >= kMinEarlierBuilds) {
    earlier.builds = Newest(similar, max_builds);
    earlier.match = "similar";
    earlier.available = static_cast<int64_t>(similar.size());
  }
  return earlier;
}

Estimate EstimateRemaining(const EarlierBuilds& earlier, const std::vector<LivePhase>& live, double now) {
  Estimate estimate;
  estimate.match = earlier.match;
  estimate.builds = earlier.builds.empty() ? earlier.available : static_cast<int64_t>(earlier.builds.size());
  if (earlier.builds.size() < kMinEarlierBuilds) return estimate;

  const std::vector<Boundary> boundaries = BoundariesOf(live);
  std::vector<double> predictions;
  std::vector<double> logs;
  double longest = 0;
  for (const EarlierBuild& build : earlier.builds) {
    predictions.push_back(Predict(build, boundaries, now));
    logs.push_back(std::log(std::max(predictions.back(), kSmallestSeconds)));
    longest = std::max(longest, build.elapsed);
  }
  // Spread on a log scale (remaining times are positive and skewed), widened for a
  // small sample: with n builds the next one falls outside their range often.
  const double n = static_cast<double>(logs.size());
  double mean = 0;
  for (double value : logs) mean += value / n;
  double variance = 0;
  for (double value : logs) variance += (value - mean) * (value - mean) / (n - 1);
  const double spread = std::sqrt(variance * (1 + 1 / n) + kFloorSpread * kFloorSpread);
  const double center = Quantile(predictions, 0.5);
  estimate.remaining = Estimate::Remaining{center * std::exp(-kZ90 * spread), center, center * std::exp(kZ90 * spread)};
  estimate.longer_than_history = now > longest;
  return estimate;
}

}  // namespace trtwatch::history
