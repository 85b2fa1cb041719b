#include "core/phase_tree.h"

#include <gtest/gtest.h>

namespace trtwatch {
namespace {

Event Start(int64_t id, int64_t parent, const std::string& name, int32_t total) {
  Event e;
  e.type = EventType::kPhaseStart;
  e.id = id;
  e.parent = parent;
  e.phase = name;
  e.total = total;
  return e;
}

Event Step(int64_t id, int32_t step) {
  Event e;
  e.type = EventType::kStep;
  e.id = id;
  e.step = step;
  return e;
}

Event Finish(int64_t id) {
  Event e;
  e.type = EventType::kPhaseFinish;
  e.id = id;
  return e;
}

TEST(PhaseTreeTest, SnapshotIsDepthFirstWithDepthsAndCounts) {
  PhaseTree tree;
  tree.Apply(Start(1, kNoPhase, "Building engine", 6));
  tree.Apply(Start(2, 1, "Building engine from subgraph", 1));
  tree.Apply(Start(3, 2, "Computing profile costs", 8));
  tree.Apply(Start(4, kNoPhase, "another root", 2));
  tree.Apply(Start(5, 3, "Timing tactics", 3));
  tree.Apply(Step(3, 4));
  auto snap = tree.Snapshot();
  ASSERT_EQ(snap->active.size(), 5u);
  const std::vector<int64_t> order = {1, 2, 3, 5, 4};
  const std::vector<int> depths = {0, 1, 2, 3, 0};
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(snap->active[i].id, order[i]);
    EXPECT_EQ(snap->active[i].depth, depths[i]);
  }
  EXPECT_EQ(snap->active[2].done, 5);  // step 4 means 5 done

  tree.Apply(Finish(5));
  tree.Apply(Finish(3));
  auto later = tree.Snapshot();
  EXPECT_EQ(later->active.size(), 3u);
  EXPECT_EQ(later->phases_finished, 2);
  EXPECT_EQ(snap->active.size(), 5u);  // an earlier snapshot never changes
}

TEST(PhaseTreeTest, CancelStallAndFinishAreReflected) {
  PhaseTree tree;
  tree.Apply(Start(1, kNoPhase, "root", 2));
  Event stall;
  stall.type = EventType::kStall;
  stall.silent_for = 30;
  tree.Apply(stall);
  EXPECT_TRUE(tree.current().stalled_for.has_value());
  tree.Apply(Step(1, 0));
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
