#include "sinks/tty_frame.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace trtwatch {
namespace {

PhaseNode Node(int64_t id, int64_t parent, int depth, const std::string& name, int32_t done, int32_t total,
               double started_at = 0) {
  PhaseNode n;
  n.id = id;
  n.parent = parent;
  n.depth = depth;
  n.name = name;
  n.done = done;
  n.total = total;
  n.started_at = started_at;
  return n;
}

TreeSnapshot SimulatedTree() {
  TreeSnapshot tree;
  tree.backend = "simulated";
  tree.facts = {{"simulated", "true"}, {"profile", "large-transformer"}, {"seed", "1"}, {"speed", "4"}};
  tree.active = {Node(1, kNoPhase, 0, "Building engine", 3, 6, 0.0),
                 Node(2, 1, 1, "Building engine from subgraph", 0, 1, 1.0),
                 Node(3, 2, 2, "Computing profile costs", 4, 8, 2.5)};
  tree.last_progress_t = 9.5;
  tree.phases_finished = 12;
  return tree;
}

bool Contains(const std::string& line, const std::string& part) { return line.find(part) != std::string::npos; }

size_t IndentOf(const std::string& line) { return line.find_first_not_of(' '); }

TEST(TtyFrameTest, HeaderSaysSimulatedElapsedAndStatus) {
  FrameOptions options;
  options.width = 100;
  const auto lines = RenderFrame(SimulatedTree(), 10.0, options);
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(Contains(lines[0], "SIMULATED build of large-transformer (seed 1, speed 4x)")) << lines[0];
  EXPECT_TRUE(Contains(lines[0], "10.0s")) << lines[0];
  EXPECT_TRUE(Contains(lines[0], "building")) << lines[0];
  EXPECT_TRUE(Contains(lines[0], "12 phases done")) << lines[0];
}

TEST(TtyFrameTest, AnEstimateShowsUnderTheHeaderAndCountsDownBetweenEstimates) {
  TreeSnapshot tree = SimulatedTree();
  tree.estimate = Estimate{Estimate::Remaining{250, 300, 340}, 7, "exact", false};
  tree.estimate_t = 10;
  auto lines = RenderFrame(tree, 10.0, FrameOptions{});
  ASSERT_GE(lines.size(), 2u);
  EXPECT_TRUE(Contains(lines[1], "about 4\u20136 min left, from 7 earlier builds")) << lines[1];
  lines = RenderFrame(tree, 130.0, FrameOptions{});  // two silent minutes later
  EXPECT_TRUE(Contains(lines[1], "about 2\u20134 min left")) << lines[1];
  tree.finished = true;
  EXPECT_FALSE(Contains(RenderFrame(tree, 131.0, FrameOptions{})[1], "left")) << "a finished build has no ETA";
}

TEST(TtyFrameTest, NarrowHeadersDropTheCountBeforeTheDescription) {
  const auto lines = RenderFrame(SimulatedTree(), 10.0, FrameOptions{});  // 80 columns
  EXPECT_TRUE(Contains(lines[0], "SIMULATED build of large-transformer (seed 1, speed 4x)")) << lines[0];
  EXPECT_FALSE(Contains(lines[0], "phases done")) << lines[0];
  FrameOptions narrow;
  narrow.width = 40;
  const auto cut = RenderFrame(SimulatedTree(), 10.0, narrow);
  EXPECT_TRUE(Contains(cut[0], "SIMULATED")) << cut[0];
  EXPECT_TRUE(Contains(cut[0], "building")) << cut[0];
}

TEST(TtyFrameTest, PhasesAreIndentedByDepthWithStepsAndElapsed) {
  const auto lines = RenderFrame(SimulatedTree(), 10.0, FrameOptions{});
  ASSERT_EQ(lines.size(), 4u);  // header + 3 phases; no activity line (0.5 s of quiet)
  EXPECT_EQ(IndentOf(lines[1]), 0u);
  EXPECT_EQ(IndentOf(lines[2]), 2u);
  EXPECT_EQ(IndentOf(lines[3]), 4u);
  EXPECT_TRUE(Contains(lines[1], "Building engine"));
  EXPECT_TRUE(Contains(lines[1], "3/6"));
  EXPECT_TRUE(Contains(lines[1], "10.0s"));  // elapsed since the phase started
  EXPECT_TRUE(Contains(lines[3], "4/8"));
  EXPECT_TRUE(Contains(lines[3], "7.5s"));
  // Half the bar is filled for 4/8 (unicode bars: U+2588 full, U+2591 light).
  const std::string full = "\u2588";
  size_t filled = 0;
  for (size_t pos = lines[3].find(full); pos != std::string::npos; pos = lines[3].find(full, pos + 1)) ++filled;
  EXPECT_GT(filled, 0u);
  EXPECT_FALSE(Contains(lines[1], "ETA"));
}

TEST(TtyFrameTest, SilenceShowsLastActivityInWholeSeconds) {
  TreeSnapshot tree = SimulatedTree();
  tree.last_progress_t = 10.0;
  auto lines = RenderFrame(tree, 52.4, FrameOptions{});
  ASSERT_GE(lines.size(), 2u);
  EXPECT_TRUE(Contains(lines[1], "last activity 42 s ago")) << lines[1];
  EXPECT_FALSE(Contains(lines[1], "stall"));
  tree.stalled_for = 40.0;
  lines = RenderFrame(tree, 52.4, FrameOptions{});
  EXPECT_TRUE(Contains(lines[1], "stall warning")) << lines[1];
  // Short quiet: no activity line.
  EXPECT_FALSE(Contains(RenderFrame(SimulatedTree(), 10.5, FrameOptions{})[1], "last activity"));
}

TEST(TtyFrameTest, CancelRequestSaysCancellingWithReasonAndHint) {
  TreeSnapshot tree = SimulatedTree();
  tree.cancel_reason = CancelReason::kSignal;
  tree.cancel_message = "interrupted (SIGINT)";
  tree.cancel_requested_at = 9.0;
  FrameOptions options;
  options.cancel_hint = "press Ctrl+C again to force";
  const auto lines = RenderFrame(tree, 10.0, options);
  EXPECT_TRUE(Contains(lines[0], "cancelling"));
  EXPECT_EQ(lines[1], "Cancelling \u2014 waiting for TensorRT to finish the current step\u2026");
  EXPECT_TRUE(Contains(lines[2], "interrupted (SIGINT) (signal)")) << lines[2];
  EXPECT_TRUE(Contains(lines[2], "press Ctrl+C again to force")) << lines[2];

  options.unicode = false;
  EXPECT_EQ(RenderFrame(tree, 10.0, options)[1], "Cancelling - waiting for TensorRT to finish the current step...");
}

TEST(TtyFrameTest, EveryLineFitsTheWidth) {
  TreeSnapshot tree = SimulatedTree();
  tree.active.push_back(Node(4, 3, 3, "Finding fastest tactic for node /model/layers.23/attention/MatMul_1 " +
                                          std::string(100, 'x'),
                             1, 24, 3));
  for (int width : {20, 40, 60, 80, 100, 200}) {
    FrameOptions options;
    options.width = width;
    for (const std::string& line : RenderFrame(tree, 10.0, options)) {
      EXPECT_LE(DisplayWidth(line), static_cast<size_t>(width - 1)) << width << ": " << line;
    }
  }
  FrameOptions options;
  options.width = 100;
  const auto lines = RenderFrame(tree, 10.0, options);
  EXPECT_TRUE(Contains(lines.back(), "Finding fas")) << lines.back();
  EXPECT_TRUE(Contains(lines.back(), "\u2026")) << lines.back();
  EXPECT_TRUE(Contains(lines.back(), "1/24")) << lines.back();  // the numbers survive elision
}

TEST(TtyFrameTest, ColourAddsEscapesButNoWidth) {
  FrameOptions plain, coloured;
  coloured.color = true;
  const auto a = RenderFrame(SimulatedTree(), 10.0, plain);
  const auto b = RenderFrame(SimulatedTree(), 10.0, coloured);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].find('\x1b'), std::string::npos);
    EXPECT_NE(b[i].find('\x1b'), std::string::npos) << i;
    EXPECT_EQ(DisplayWidth(a[i]), DisplayWidth(b[i])) << i;
  }
}

TEST(TtyFrameTest, TallTreesKeepTheNewestChainAndCountTheRest) {
  TreeSnapshot tree;
  tree.backend = "tensorrt";
  tree.model = "model.onnx";
  tree.active.push_back(Node(1, kNoPhase, 0, "Building engine", 0, 6));
  tree.active.push_back(Node(2, 1, 1, "Timing graph nodes", 0, 80));
  // Four workers, each with a chain of two.
  int64_t id = 3;
  for (int w = 0; w < 4; ++w) {
    const int64_t node = id++;
    tree.active.push_back(Node(node, 2, 2, "Finding fastest tactic for node " + std::to_string(w), 0, 10));
    tree.active.push_back(Node(id++, node, 3, "Measuring tactic time " + std::to_string(w), 0, 4));
  }
  FrameOptions options;
  options.height = 7;  // 6 rows: header + 4 phases + the "more" line
  const auto lines = RenderFrame(tree, 1.0, options);
  ASSERT_EQ(lines.size(), 6u);
  // The newest phase (Measuring 3) and its chain are kept, in tree order.
  EXPECT_TRUE(Contains(lines[1], "Building engine"));
  EXPECT_TRUE(Contains(lines[2], "Timing graph nodes"));
  EXPECT_TRUE(Contains(lines[3], "Finding fastest tactic for node 3"));
  EXPECT_TRUE(Contains(lines[4], "Measuring tactic time 3"));
  EXPECT_TRUE(Contains(lines[5], "6 more active phases not shown")) << lines[5];

  options.height = 9;  // 8 rows: two more phases fit, the shallow sibling first
  const auto taller = RenderFrame(tree, 1.0, options);
  ASSERT_EQ(taller.size(), 8u);
  EXPECT_TRUE(std::any_of(taller.begin(), taller.end(),
                          [](const std::string& l) { return Contains(l, "Finding fastest tactic for node 2"); }));
  EXPECT_TRUE(Contains(taller.back(), "4 more active phases")) << taller.back();

  options.height = 40;  // everything fits: nothing hidden
  const auto all = RenderFrame(tree, 1.0, options);
  EXPECT_EQ(all.size(), 11u);
  EXPECT_FALSE(Contains(all.back(), "more active"));
}

TEST(TtyFrameTest, TinyTerminalsStillGetAFrameThatFits) {
  FrameOptions options;
  options.height = 2;
  options.width = 12;
  const auto lines = RenderFrame(SimulatedTree(), 1.0, options);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_LE(DisplayWidth(lines[0]), 11u);
}

TEST(TtyFrameTest, DisplayWidthCountsColumnsNotBytes) {
  EXPECT_EQ(DisplayWidth("abc"), 3u);
  EXPECT_EQ(DisplayWidth("\x1b[1;32mabc\x1b[0m"), 3u);
  EXPECT_EQ(DisplayWidth("caf\u00e9"), 4u);
  EXPECT_EQ(DisplayWidth("e\u0301"), 1u);           // combining accent
  EXPECT_EQ(DisplayWidth("\u6a21\u578b"), 4u);      // two CJK characters
  EXPECT_EQ(DisplayWidth("\u2588\u2591\u2026"), 3u);
  EXPECT_EQ(DisplayWidth("\xff"), 1u);              // invalid byte: one replacement column
}

TEST(TtyFrameTest, ElideMiddleKeepsBothEnds) {
  EXPECT_EQ(ElideMiddle("short", 10), "short");
  EXPECT_EQ(ElideMiddle("Finding fastest tactic for node 12", 20), "Finding fa\u2026r node 12");
  EXPECT_EQ(DisplayWidth(ElideMiddle("Finding fastest tactic for node 12", 20)), 20u);
  EXPECT_EQ(ElideMiddle("abcdefghij", 7, /*unicode=*/false), "ab...ij");
  const std::string wide = ElideMiddle("\u6a21\u578b\u6a21\u578b\u6a21\u578b", 7);
  EXPECT_LE(DisplayWidth(wide), 7u);
  EXPECT_EQ(wide.substr(0, 3), "\u6a21");  // never splits a character
}

TEST(TtyFrameTest, TruncateKeepsEscapesWholeAndResetsColour) {
  EXPECT_EQ(TruncateToWidth("\x1b[32mabcdef\x1b[0m", 3), "\x1b[32mabc\x1b[0m");
  EXPECT_EQ(TruncateToWidth("abc", 10), "abc");
  EXPECT_EQ(TruncateToWidth("\u6a21\u578b", 3), "\u6a21");
}

TEST(TtyFrameTest, NamesCannotInjectEscapes) {
  TreeSnapshot tree = SimulatedTree();
  tree.active[0].name = "evil\x1b[2Jname";
  for (const std::string& line : RenderFrame(tree, 1.0, FrameOptions{})) {
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace trtwatch
