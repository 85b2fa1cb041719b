#include "core/phase_tree.h"

#include <gtest/gtest.h>

#include "support/event_builders.h"

namespace trtwatch {
namespace {

using testing::PhaseFinish;
using testing::PhaseStart;
using testing::PhaseStep;

TEST(PhaseTreeTest, SnapshotIsDepthFirstWithDepthsAndCounts) {
  PhaseTree tree;
  tree.Apply(PhaseStart(0, 1, kNoPhase, "Building engine", 6));
  tree.Apply(PhaseStart(0, 2, 1, "Building engine from subgraph", 1));
  tree.Apply(PhaseStart(0, 3, 2, "Computing profile costs", 8));
  tree.Apply(PhaseStart(0, 4, kNoPhase, "another root", 2));
  tree.Apply(PhaseStart(0, 5, 3, "Timing tactics", 3));
  tree.Apply(PhaseStep(0, 3, 4));
  auto snap = tree.Snapshot();
  ASSERT_EQ(snap->active.size(), 5u);
  const std::vector<int64_t> order = {1, 2, 3, 5, 4};
  const std::vector<int> depths = {0, 1, 2, 3, 0};
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(snap->active[i].id, order[i]);
    EXPECT_EQ(snap->active[i].depth, depths[i]);
  }
  EXPECT_EQ(snap->active[2].done, 5);  // step 4 means 5 done

  tree.Apply(PhaseFinish(0, 5));
  tree.Apply(PhaseFinish(0, 3));
  auto later = tree.Snapshot();
  EXPECT_EQ(later->active.size(), 3u);
  EXPECT_EQ(later->phases_finished, 2);
  EXPECT_EQ(snap->active.size(), 5u);  // an earlier snapshot never changes
}

TEST(PhaseTreeTest, CancelStallAndFinishAreReflected) {
  PhaseTree tree;
  tree.Apply(PhaseStart(0, 1, kNoPhase, "root", 2));
  Event stall;
  stall.type = EventType::kStall;
  stall.silent_for = 30;
  tree.Apply(stall);
  EXPECT_TRUE(tree.current().stalled_for.has_value());
  tree.Apply(PhaseStep(0, 1, 0));
  EXPECT_FALSE(tree.current().stalled_for.has_value());
  Event cancel;
  cancel.type = EventType::kCancelRequested;
  cancel.reason = CancelReason::kSignal;
  cancel.message = "interrupted";
  cancel.t = 3;
  tree.Apply(cancel);
  EXPECT_EQ(tree.current().cancel_reason, CancelReason::kSignal);
  EXPECT_DOUBLE_EQ(tree.current().cancel_requested_at, 3);
  Event finish;
  finish.type = EventType::kBuildFinish;
  finish.status = BuildStatus::kCancelled;
  tree.Apply(finish);
  EXPECT_TRUE(tree.current().finished);
  EXPECT_TRUE(tree.current().active.empty());
}

}  // namespace
}  // namespace trtwatch
