// Looking back at the history (history/report.h): per-key durations, regressions, the
// trend, and the phase-by-phase comparison with its verdict.
#include "history/report.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace trtwatch::history {
namespace {

HistoryEntry Build(const std::string& id, double elapsed, double timing_self) {
  HistoryEntry entry;
  entry.build = id;
  entry.key = "k1";
  entry.model = "resnet50.onnx";
  entry.status = BuildStatus::kSucceeded;
  entry.elapsed = elapsed;
  entry.families = {{"Building engine", 1, elapsed, elapsed - timing_self}, {"Timing tactics", 1, timing_self, timing_self}};
  return entry;
}

TEST(HistoryReportTest, PerKeyDurationsAndTheBuildThatRegressed) {
  const std::vector<HistoryEntry> entries = {Build("b_1", 100, 60), Build("b_2", 102, 61), Build("b_3", 98, 59),
                                             Build("b_4", 150, 110), Build("b_5", 101, 60)};
  const std::vector<KeyReport> reports = Report(entries);
  ASSERT_EQ(reports.size(), 1u);
  const KeyReport& report = reports[0];
  EXPECT_EQ(report.builds, 5u);
  EXPECT_DOUBLE_EQ(report.elapsed.median, 101);
  EXPECT_GT(report.elapsed.p90, 120);
  ASSERT_EQ(report.regressions.size(), 1u);
  EXPECT_EQ(report.regressions[0].build, "b_4");
  EXPECT_DOUBLE_EQ(report.regressions[0].median_before, 100);
  ASSERT_FALSE(report.families.empty());
  EXPECT_EQ(report.families[0].family, "Timing tactics");  // the most own time
  EXPECT_FALSE(report.trend);  // too few builds to say
}

TEST(HistoryReportTest, ARegressionIsJudgedOnTheMedianOfEveryEarlierSuccessfulBuildInAnyOrder) {
  std::vector<HistoryEntry> entries = {Build("b_1", 100, 50), Build("b_2", 300, 50), Build("b_3", 90, 50),
                                       Build("b_4", 500, 50), Build("b_5", 110, 50), Build("b_6", 250, 50)};
  entries[3].status = BuildStatus::kFailed;  // not an earlier successful build
  entries[4].families.push_back({"Serializing engine", 1, 4, 4});  // in one build of five
  const std::vector<KeyReport> reports = Report(entries);
  ASSERT_EQ(reports.size(), 1u);
  // b_5: the median of 100, 300 and 90 is 100, and 110 is within 1.2 of it; b_6: the
  // median of 90, 100, 110 and 300 is 105, and 250 is not.
  ASSERT_EQ(reports[0].regressions.size(), 1u);
  EXPECT_EQ(reports[0].regressions[0].build, "b_6");
  EXPECT_DOUBLE_EQ(reports[0].regressions[0].median_before, 105);
  const auto serializing = std::find_if(reports[0].families.begin(), reports[0].families.end(),
                                        [](const FamilyReport& f) { return f.family == "Serializing engine"; });
  ASSERT_NE(serializing, reports[0].families.end());
  EXPECT_EQ(serializing->total.count, 5u);  // counted as none in the four builds without it
  EXPECT_DOUBLE_EQ(serializing->total.median, 0);
  EXPECT_DOUBLE_EQ(serializing->self_share, 0);
}

TEST(HistoryReportTest, TheTrendComparesTheNewestThirdWithTheOldest) {
  std::vector<HistoryEntry> entries;
  for (int i = 0; i < 9; ++i) entries.push_back(Build("b_" + std::to_string(i), 100 + 5 * i, 50));
  const std::vector<KeyReport> reports = Report(entries);
  ASSERT_TRUE(reports[0].trend);
  EXPECT_NEAR(*reports[0].trend, 135.0 / 105.0 - 1, 1e-9);
}

TEST(HistoryReportTest, CompareSaysWhatGotSlowerAndByHowMuch) {
  const Comparison comparison = Compare(Build("b_1", 100, 60), "b_1", Build("b_2", 130, 90), "b_2");
  ASSERT_FALSE(comparison.families.empty());
  EXPECT_EQ(comparison.families[0].family, "Timing tactics");
  EXPECT_DOUBLE_EQ(comparison.families[0].after - comparison.families[0].before, 30);
  EXPECT_EQ(comparison.verdict, "b_2 was 30 % slower than b_1 (130.0s vs 100.0s); most of it in Timing tactics (+30.0s)");
}

TEST(HistoryReportTest, ABuildAgainstItsKeysMedian) {
  const std::vector<HistoryEntry> entries = {Build("b_1", 100, 60), Build("b_2", 90, 50), Build("b_3", 110, 70)};
  const std::optional<HistoryEntry> median = MedianEntry({&entries[0], &entries[1], &entries[2]});
  ASSERT_TRUE(median);
  EXPECT_DOUBLE_EQ(median->elapsed, 100);
  const Comparison comparison = Compare(*median, "the median of 3 builds", Build("b_4", 101, 60), "b_4");
  EXPECT_EQ(comparison.verdict, "b_4 took about as long as the median of 3 builds (101.0s vs 100.0s)");
}

}  // namespace
}  // namespace trtwatch::history
