#include <gtest/gtest.h>

#include "sinks/format.h"
#include "sinks/summary.h"

namespace trtwatch {
namespace {

TEST(FormatTest, Durations) {
  EXPECT_EQ(FormatDuration(0), "0.0s");
  EXPECT_EQ(FormatDuration(0.46), "0.4s");
  EXPECT_EQ(FormatDuration(59.99), "59.9s");
  EXPECT_EQ(FormatDuration(185), "3m05s");
  EXPECT_EQ(FormatDuration(3725), "1h02m");
  EXPECT_EQ(FormatDuration(-1), "0.0s");
}

TEST(FormatTest, EstimatesReadAsARangeThatCountsDown) {
  Estimate estimate;
  estimate.builds = 7;
  estimate.remaining = Estimate::Remaining{250, 300, 340};
  EXPECT_EQ(EstimateText(estimate, 0), "about 4\u20136 min left, from 7 earlier builds");
  EXPECT_EQ(EstimateText(estimate, 0, /*unicode=*/false), "about 4-6 min left, from 7 earlier builds");
  EXPECT_EQ(EstimateText(estimate, 280, false), "about 0-60 s left, from 7 earlier builds");
  estimate.match = "similar";
  estimate.longer_than_history = true;
  EXPECT_EQ(EstimateText(estimate, 0, false), "about 4-6 min left, longer than any of the 7 earlier builds on similar GPUs");
  Estimate none;
  none.builds = 2;
  EXPECT_EQ(EstimateText(none, 0), "no ETA: 2 earlier builds of this model and GPU (3 needed)");
}

TEST(FormatTest, BuildTitleNamesTheModelOnlyWhenKnown) {
  EXPECT_EQ(BuildTitle("tensorrt", "resnet50.onnx"), "tensorrt build of resnet50.onnx");
  EXPECT_EQ(BuildTitle("tensorrt", ""), "tensorrt build");  // never "tensorrt build of "
  EXPECT_EQ(BuildTitle("", ""), "build");
  EXPECT_EQ(BuildTitle("replay", "resnet50.onnx", {{"replay_of", "b_42"}, {"replay_of_backend", "tensorrt"}}),
            "REPLAY of build b_42 (tensorrt build of resnet50.onnx)");
}

TEST(FormatTest, SummaryNamesStatusLatencyAndTopPhases) {
  Event e;
  e.type = EventType::kBuildFinish;
  e.status = BuildStatus::kTimedOut;
  e.elapsed = 2.04;
  e.error = "the build exceeded its time budget (--timeout 2s)";
  e.cancel_latency = CancelLatency{0.012, 0.030};
  for (int i = 0; i < 10; ++i) {
    e.phases.push_back(PhaseSummary{"phase " + std::to_string(i), 2, 0, 10.0 - i, 5.0 - 0.5 * i});
  }
  e.phases[0].early = 1;
  const auto lines = FormatSummary(e, SummaryOptions{3});
  ASSERT_GE(lines.size(), 8u);
  EXPECT_EQ(lines[0], "build timed out after 2.0s: the build exceeded its time budget (--timeout 2s)");
  EXPECT_EQ(lines[1], "cancel latency: 12 ms to the builder's next step, 30 ms until it returned");
  EXPECT_EQ(lines[2], "phases by time (total includes child phases, self leaves them out):");
  EXPECT_EQ(lines[3], "      total       self    count  phase");
  EXPECT_EQ(lines[4], "      10.0s       5.0s       2x  phase 0  (1 stopped early)");
  EXPECT_EQ(lines[6], "       8.0s       4.0s       2x  phase 2");
  EXPECT_EQ(lines[7], "  ... and 7 more phase names");
  EXPECT_EQ(lines.back(), "20 phases, 0 callback anomalies, 0 events dropped by this view");
}

TEST(FormatTest, AgesAndACacheHitReadAsAPersonWouldSayThem) {
  EXPECT_EQ(FormatAge(0.4), "0 seconds");
  EXPECT_EQ(FormatAge(1), "1 second");
  EXPECT_EQ(FormatAge(125), "2 minutes");
  EXPECT_EQ(FormatAge(3 * 86400 + 5000), "3 days");
  CacheUse hit{std::string(64, 'c'), "hit", 3 * 86400 + 100.0, 842.0};
  EXPECT_EQ(FormatReuse(hit), "reused the engine built 3 days ago in 14m02s (engine cache, key cccccccccccc)");
  Event finish;
  finish.type = EventType::kBuildFinish;
  finish.status = BuildStatus::kSucceeded;
  finish.cache = hit;
  const auto lines = FormatSummary(finish, SummaryOptions{3});
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[1], FormatReuse(hit));
  hit.state = "miss";
  EXPECT_EQ(FormatReuse(hit), "");
}

}  // namespace
}  // namespace trtwatch
