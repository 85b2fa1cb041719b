// The ETA from history (history/estimator.h): which earlier builds count, where a live
// build is placed among them, counting down through silence, and saying plainly when
// there is too little history or the build runs longer than any before it.
#include "history/estimator.h"

#include <gtest/gtest.h>

namespace trtwatch::history {
namespace {

// A build of two top-level phases under a root: "Optimizing" then "Timing" (the long
// one), `scale` times the reference durations 10 s and 90 s.
HistoryEntry Earlier(const std::string& key, double scale, BuildStatus status = BuildStatus::kSucceeded) {
  HistoryEntry entry;
  entry.key = key;
  entry.key_parts = {{"backend", "tensorrt"}, {"gpu.name", "H100 PCIe"}, {"gpu.compute_capability", "9.0"}};
  entry.status = status;
  entry.elapsed = 100 * scale;
  entry.sequence = {{"Building engine", 0, 0, 100 * scale, 6},
                    {"Optimizing", 1, 0, 10 * scale, 30},
                    {"Timing", 1, 10 * scale, 100 * scale, 80}};
  return entry;
}

std::vector<LivePhase> InTiming(double optimizing_took, int32_t timing_steps = 80) {
  return {{"Building engine", 0, 0, std::nullopt, 6},
          {"Optimizing", 1, 0, optimizing_took, 30},
          {"Timing", 1, optimizing_took, std::nullopt, timing_steps}};
}

TEST(EstimatorTest, FewerThanThreeEarlierBuildsGiveNoRangeAndSayHowMany) {
  const std::vector<HistoryEntry> entries = {Earlier("k", 1), Earlier("k", 1.1), Earlier("k", 1, BuildStatus::kFailed)};
  const EarlierBuilds earlier = SelectEarlierBuilds(entries, "k", entries[0].key_parts);
  EXPECT_TRUE(earlier.builds.empty());
  EXPECT_EQ(earlier.available, 2);  // the failed build does not count
  const Estimate estimate = EstimateRemaining(earlier, InTiming(10), 20);
  EXPECT_FALSE(estimate.remaining);
  EXPECT_EQ(estimate.builds, 2);
}

TEST(EstimatorTest, TheRangeCoversWhatTheEarlierBuildsSayIsLeft) {
  const std::vector<HistoryEntry> entries = {Earlier("k", 0.95), Earlier("k", 1.0), Earlier("k", 1.05),
                                             Earlier("other", 3)};
  const EarlierBuilds earlier = SelectEarlierBuilds(entries, "k", entries[0].key_parts);
  ASSERT_EQ(earlier.builds.size(), 3u);
  // 10 s into "Timing" of a build that paced like the reference: about 80 s are left.
  const Estimate estimate = EstimateRemaining(earlier, InTiming(10), 20);
  ASSERT_TRUE(estimate.remaining);
  EXPECT_EQ(estimate.match, "exact");
  EXPECT_EQ(estimate.builds, 3);
  EXPECT_NEAR(estimate.remaining->p50, 80, 4);
  EXPECT_LT(estimate.remaining->p10, 80);
  EXPECT_GT(estimate.remaining->p90, 80);
  EXPECT_FALSE(estimate.longer_than_history);
}

TEST(EstimatorTest, ASlowerStartMakesTheRestSlowerToo) {
  const std::vector<HistoryEntry> entries = {Earlier("k", 1), Earlier("k", 1), Earlier("k", 1)};
  const EarlierBuilds earlier = SelectEarlierBuilds(entries, "k", {});
  // "Optimizing" took 12 s instead of 10: the build runs at 1.2x the time.
  const Estimate estimate = EstimateRemaining(earlier, InTiming(12), 12);
  ASSERT_TRUE(estimate.remaining);
  EXPECT_NEAR(estimate.remaining->p50, 90 * 1.2, 1);
}

TEST(EstimatorTest, MoreAnnouncedWorkInAPhaseLengthensItsShare) {
  const std::vector<HistoryEntry> entries = {Earlier("k", 1), Earlier("k", 1), Earlier("k", 1)};
  const EarlierBuilds earlier = SelectEarlierBuilds(entries, "k", {});
  const Estimate same = EstimateRemaining(earlier, InTiming(10, 80), 10);
  const Estimate more = EstimateRemaining(earlier, InTiming(10, 120), 10);
  ASSERT_TRUE(same.remaining && more.remaining);
  EXPECT_NEAR(more.remaining->p50, same.remaining->p50 * 1.5, 1);
}

TEST(EstimatorTest, SilenceCountsDownAndAPhaseRunningLongNeverReachesZero) {
  const std::vector<HistoryEntry> entries = {Earlier("k", 1), Earlier("k", 1), Earlier("k", 1)};
  const EarlierBuilds earlier = SelectEarlierBuilds(entries, "k", {});
  const Estimate early = EstimateRemaining(earlier, InTiming(10), 20);
  const Estimate later = EstimateRemaining(earlier, InTiming(10), 60);  // no callback since
  ASSERT_TRUE(early.remaining && later.remaining);
  EXPECT_NEAR(early.remaining->p50 - later.remaining->p50, 40, 0.5);
  const Estimate past = EstimateRemaining(earlier, InTiming(10), 150);
  ASSERT_TRUE(past.remaining);
  EXPECT_GE(past.remaining->p10, 0);
  EXPECT_TRUE(past.longer_than_history);
}

TEST(EstimatorTest, ASimilarKeyIsAnotherGpuOfTheSameArchitectureAndSaysSo) {
  HistoryEntry l40 = Earlier("l40", 1);
  l40.key_parts = {{"backend", "tensorrt"}, {"gpu.name", "H100 SXM"}, {"gpu.compute_capability", "9.0"}};
  HistoryEntry ampere = Earlier("a100", 1);
  ampere.key_parts = {{"backend", "tensorrt"}, {"gpu.name", "A100"}, {"gpu.compute_capability", "8.0"}};
  const std::vector<HistoryEntry> entries = {l40, l40, ampere, ampere, Earlier("h100", 1)};
  const EarlierBuilds earlier = SelectEarlierBuilds(entries, "h100", Earlier("h100", 1).key_parts);
  EXPECT_EQ(earlier.match, "similar");
  EXPECT_EQ(earlier.builds.size(), 3u);  // two on the H100 SXM, one of its own; never the A100's
}

}  // namespace
}  // namespace trtwatch::history
