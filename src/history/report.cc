#include "history/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace trtwatch::history {

namespace {

// The q-quantile of sorted `values`, interpolated.
double SortedQuantile(const std::vector<double>& values, double q) {
  if (values.empty()) return 0;
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (position - static_cast<double>(below));
}

double Median(std::vector<double> values) { return DurationsOf(std::move(values)).median; }

double FamilySeconds(const HistoryEntry& entry, const std::string& family, bool self) {
  for (const FamilyTime& time : entry.families) {
    if (time.family == family) return self ? time.self_seconds : time.seconds;
  }
  return 0;
}

std::string Seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1fs", seconds);
  return text;
}

std::string Percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f %%", std::fabs(fraction) * 100);
  return text;
}

struct ReportFamilyTimes {
  std::vector<double> total;  // per build, 0 where it has none of the family
  std::vector<double> self;
};

// Each phase family's times in `builds` (FamilySeconds of each, in one pass over their
// families rather than one per family), by family name.
std::map<std::string, ReportFamilyTimes> FamilyTimesOf(const std::vector<const HistoryEntry*>& builds) {
  std::map<std::string, ReportFamilyTimes> times;
  for (size_t i = 0; i < builds.size(); ++i) {
    // Backwards: where a family is named twice, its first time counts, as FamilySeconds finds it.
    for (auto it = builds[i]->families.rbegin(); it != builds[i]->families.rend(); ++it) {
      ReportFamilyTimes& family = times[it->family];
      family.total.resize(builds.size(), 0);
      family.self.resize(builds.size(), 0);
      family.total[i] = it->seconds;
      family.self[i] = it->self_seconds;
    }
  }
  return times;
}

KeyReport ReportKey(const std::vector<const HistoryEntry*>& builds) {
  KeyReport report;
  report.key = builds.back()->key;
  report.model = builds.back()->model;
  report.backend = builds.back()->backend;
  report.builds = builds.size();
  std::vector<const HistoryEntry*> good;
  std::vector<double> elapsed;
  std::vector<double> sorted_before;  // the earlier successful builds' elapsed times, sorted as they come
  for (const HistoryEntry* entry : builds) {
    if (entry->status != BuildStatus::kSucceeded) continue;
    if (good.size() >= kMinEarlierForRegression) {
      const double median = SortedQuantile(sorted_before, 0.5);
      if (entry->elapsed > median * kRegressionRatio) report.regressions.push_back({entry->build, entry->elapsed, median});
    }
    good.push_back(entry);
    elapsed.push_back(entry->elapsed);
    sorted_before.insert(std::upper_bound(sorted_before.begin(), sorted_before.end(), entry->elapsed), entry->elapsed);
  }
  report.succeeded = good.size();
  report.elapsed = DurationsOf(elapsed);
  if (good.size() >= 6) {
    const size_t third = good.size() / 3;
    const double oldest = Median(std::vector<double>(elapsed.begin(), elapsed.begin() + third));
    const double newest = Median(std::vector<double>(elapsed.end() - third, elapsed.end()));
    if (oldest > 0) report.trend = newest / oldest - 1;
  }
  for (auto& [family, times] : FamilyTimesOf(good)) {
    FamilyReport f{family, DurationsOf(std::move(times.total)), 0};
    if (report.elapsed.median > 0) f.self_share = Median(std::move(times.self)) / report.elapsed.median;
    report.families.push_back(std::move(f));
  }
  std::stable_sort(report.families.begin(), report.families.end(),
                   [](const FamilyReport& a, const FamilyReport& b) { return a.self_share > b.self_share; });
  return report;
}

}  // namespace

Durations DurationsOf(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return Durations{seconds.size(), SortedQuantile(seconds, 0.5), SortedQuantile(seconds, 0.9)};
}

std::vector<KeyReport> Report(const std::vector<HistoryEntry>& entries) {
  std::map<std::string, std::vector<const HistoryEntry*>> by_key;
  std::vector<std::string> newest_first;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (by_key.find(it->key) == by_key.end()) newest_first.push_back(it->key);
    by_key[it->key].insert(by_key[it->key].begin(), &*it);
  }
  std::vector<KeyReport> reports;
  for (const std::string& key : newest_first) reports.push_back(ReportKey(by_key[key]));
  return reports;
}

Comparison Compare(const HistoryEntry& before, const std::string& before_label, const HistoryEntry& after,
                   const std::string& after_label) {
  Comparison comparison{before_label, after_label, before.elapsed, after.elapsed, {}, ""};
  std::set<std::string> families;
  for (const FamilyTime& time : before.families) families.insert(time.family);
  for (const FamilyTime& time : after.families) families.insert(time.family);
  for (const std::string& family : families) {
    comparison.families.push_back(
        FamilyDelta{family, FamilySeconds(before, family, true), FamilySeconds(after, family, true)});
  }
  std::stable_sort(comparison.families.begin(), comparison.families.end(), [](const FamilyDelta& a, const FamilyDelta& b) {
    return std::fabs(a.after - a.before) > std::fabs(b.after - b.before);
  });
  const double change = before.elapsed > 0 ? after.elapsed / before.elapsed - 1 : 0;
  std::string verdict = after_label;
  if (std::fabs(change) < 0.05) {
    verdict += " took about as long as " + before_label + " (" + Seconds(after.elapsed) + " vs " +
               Seconds(before.elapsed) + ")";
  } else {
    verdict += " was " + Percent(change) + (change > 0 ? " slower" : " faster") + " than " + before_label + " (" +
               Seconds(after.elapsed) + " vs " + Seconds(before.elapsed) + ")";
  }
  if (!comparison.families.empty() && std::fabs(change) >= 0.05) {
    const FamilyDelta& most = comparison.families.front();
    const double delta = most.after - most.before;
    verdict += "; most of it in " + most.family + " (" + (delta >= 0 ? "+" : "-") + Seconds(std::fabs(delta)) + ")";
  }
  comparison.verdict = verdict;
  return comparison;
}

std::optional<HistoryEntry> MedianEntry(const std::vector<const HistoryEntry*>& entries) {
  if (entries.empty()) return std::nullopt;
  HistoryEntry median = *entries.back();
  std::vector<double> elapsed;
  std::set<std::string> families;
  for (const HistoryEntry* entry : entries) {
    elapsed.push_back(entry->elapsed);
    for (const FamilyTime& time : entry->families) families.insert(time.family);
  }
  median.elapsed = Median(elapsed);
  median.families.clear();
  for (const std::string& family : families) {
    std::vector<double> total;
    std::vector<double> self;
    for (const HistoryEntry* entry : entries) {
      total.push_back(FamilySeconds(*entry, family, false));
      self.push_back(FamilySeconds(*entry, family, true));
    }
    median.families.push_back(FamilyTime{family, 0, Median(total), Median(self)});
  }
  return median;
}

MedianComparison CompareWithKeyMedian(const std::vector<HistoryEntry>& entries, const HistoryEntry& after) {
  std::vector<const HistoryEntry*> others;
  for (const HistoryEntry& entry : entries) {
    if (entry.key == after.key && entry.build != after.build && entry.status == BuildStatus::kSucceeded) {
      others.push_back(&entry);
    }
  }
  const std::optional<HistoryEntry> median = MedianEntry(others);
  if (!median) return {std::nullopt, "no other successful build of " + after.build + "'s key to compare with"};
  return {Compare(*median, "the median of " + std::to_string(others.size()) + " builds", after, after.build), ""};
}

}  // namespace trtwatch::history
