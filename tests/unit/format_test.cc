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

TEST(FormatTest, SummaryNamesStatusLatencyAndTopPhases) {
  Event e;
  e.type = EventType::kBuildFinish;
  e.status = BuildStatus::kTimedOut;
  e.elapsed = 2.04;
  e.error = "the build exceeded its time budget (--timeout 2s)";
  e.cancel_latency = CancelLatency{0.012, 0.030};
  for (int i = 0; i < 10; ++i) e.phases.push_back(PhaseSummary{"phase " + std::to_string(i), 2, 0, 10.0 - i});
  e.phases[0].early = 1;
  const auto lines = FormatSummary(e, SummaryOptions{3});
  ASSERT_GE(lines.size(), 7u);
  EXPECT_EQ(lines[0], "build timed out after 2.0s: the build exceeded its time budget (--timeout 2s)");
  EXPECT_EQ(lines[1], "cancel latency: 12 ms to the builder's next step, 30 ms until it returned");
  EXPECT_NE(lines[3].find("phase 0"), std::string::npos);
  EXPECT_NE(lines[3].find("1 stopped early"), std::string::npos);
  EXPECT_NE(lines[5].find("phase 2"), std::string::npos);
  EXPECT_EQ(lines[6], "  ... and 7 more phase names");
  EXPECT_EQ(lines.back(), "20 phases, 0 callback anomalies, 0 events dropped by this view");
}

}  // namespace
}  // namespace trtwatch
