#include "mcp/progress.h"

#include <gtest/gtest.h>

#include <vector>

namespace trtwatch::mcp {
namespace {

using nlohmann::json;

json Phase(int id, json parent, const char* name, int done, int total) {
  return {{"id", id}, {"parent", parent}, {"phase", name}, {"depth", 0}, {"done", done}, {"total", total}};
}

// A vector, not json: `json{phase}` is the phase itself for g++ but an array of it for
// clang (nlohmann-json's brace-initialisation caveat), and "active" is always an array.
json Record(const char* status, const std::vector<json>& active) {
  return {{"status", status}, {"phase", {{"active", active}}}, {"error", nullptr}};
}

TEST(McpProgress, NamesTheDeepestSinglePhaseAndTheRoot) {
  const json r = Record("running", {Phase(1, nullptr, "Building engine", 2, 6), Phase(2, 1, "Building engine from subgraph", 0, 1),
                                    Phase(3, 2, "Timing graph nodes", 47, 83)});
  const Position p = PositionOf(r);
  EXPECT_EQ(p.where, "Timing graph nodes 47/83 \xE2\x80\xBA Building engine 2/6");
  ASSERT_TRUE(p.total);
  EXPECT_EQ(*p.total, 6);
  EXPECT_GT(p.count, 2);
  EXPECT_LT(p.count, 3);
}

TEST(McpProgress, StopsAboveParallelWork) {
  const json r = Record("running", {Phase(1, nullptr, "Building engine", 2, 6), Phase(2, 1, "Timing graph nodes", 10, 80),
                                    Phase(3, 2, "Finding fastest tactic for node 10", 1, 4),
                                    Phase(4, 2, "Finding fastest tactic for node 11", 2, 4)});
  EXPECT_EQ(PositionOf(r).where, "Timing graph nodes 10/80 \xE2\x80\xBA Building engine 2/6");
}

// A running build's estimate (docs/history.md) ends the message, in the terminal's words;
// a new range is news even when the count has not moved.
TEST(McpProgress, TheMessageCarriesTheEstimateInWords) {
  json r = Record("running", {Phase(1, nullptr, "Building engine", 2, 6)});
  r["estimate"] = {{"remaining", {{"p10", 240}, {"p50", 290}, {"p90", 360}}},
                   {"based_on", {{"builds", 7}, {"match", "exact"}}},
                   {"longer_than_history", false},
                   {"t", 30}};
  EXPECT_EQ(EstimateTextOf(r), "about 4\u2013" "6 min left, from 7 earlier builds");
  ProgressTracker t;
  std::optional<ProgressReport> first = t.Next(r, 0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->message, "Building engine 2/6; about 4\u2013" "6 min left, from 7 earlier builds");
  r["estimate"]["remaining"] = {{"p10", 60}, {"p50", 70}, {"p90", 80}};
  std::optional<ProgressReport> second = t.Next(r, 0);
  ASSERT_TRUE(second) << "a new range is sent";
  EXPECT_GT(second->progress, first->progress);
  EXPECT_EQ(second->message, "Building engine 2/6; about 60\u2013" "80 s left, from 7 earlier builds");

  r["estimate"]["remaining"] = nullptr;  // too little history: nothing said
  EXPECT_EQ(EstimateTextOf(r), "");
  r.erase("estimate");
  EXPECT_EQ(EstimateTextOf(r), "");
}

TEST(McpProgress, QueuedAndStarting) {
  EXPECT_EQ(PositionOf(Record("queued", {})).where, "queued: waiting for a free build slot");
  EXPECT_EQ(PositionOf(Record("running", {})).where, "starting");
  EXPECT_FALSE(PositionOf(Record("running", {})).total);
}

TEST(McpProgress, ValuesStrictlyIncreaseEvenWhenTheNestedCountRestarts) {
  ProgressTracker t;
  std::vector<double> values;
  auto next = [&](const json& r, double silent = 0) {
    std::optional<ProgressReport> rep = t.Next(r, silent);
    if (rep) values.push_back(rep->progress);
    return rep;
  };
  ASSERT_TRUE(next(Record("queued", {})));
  ASSERT_TRUE(next(Record("running", {})));
  ASSERT_TRUE(next(Record("running", {Phase(1, nullptr, "Building engine", 2, 6), Phase(2, 1, "Optimizing graph", 30, 36)})));
  // A new child phase starts at 0: the count falls back, the value must not.
  ASSERT_TRUE(next(Record("running", {Phase(1, nullptr, "Building engine", 2, 6), Phase(2, 1, "Computing profile costs", 0, 10)})));
  EXPECT_FALSE(next(Record("running", {Phase(1, nullptr, "Building engine", 2, 6), Phase(2, 1, "Computing profile costs", 0, 10)})))
      << "nothing new: nothing sent";
  ASSERT_TRUE(next(Record("running", {Phase(1, nullptr, "Building engine", 3, 6)})));
  EXPECT_EQ(values.back(), 3);
  for (size_t i = 1; i < values.size(); ++i) EXPECT_GT(values[i], values[i - 1]) << i;
  std::optional<ProgressReport> done = next(Record("succeeded", {}));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->progress, 6);
  EXPECT_EQ(done->total, 6);
  EXPECT_EQ(done->message, "build succeeded");
}

TEST(McpProgress, SilenceIsAnnouncedHonestlyAndOnlyAsItGrows) {
  ProgressTracker t;
  const json r = Record("running", {Phase(1, nullptr, "Building engine", 3, 6)});
  ASSERT_TRUE(t.Next(r, 0));
  EXPECT_FALSE(t.Next(r, 4));
  std::optional<ProgressReport> s = t.Next(r, 10.2);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->message, "no progress callback for 10 s: TensorRT is inside one step (Building engine 3/6)");
  EXPECT_GT(s->progress, 3);
  EXPECT_LT(s->progress, 4) << "silence does not count as work";
  EXPECT_FALSE(t.Next(r, 15));
  std::optional<ProgressReport> s2 = t.Next(r, 41);
  ASSERT_TRUE(s2);
  EXPECT_EQ(s2->message.rfind("no progress callback for 41 s", 0), 0u);
  EXPECT_GT(s2->progress, s->progress);
  std::optional<ProgressReport> moved = t.Next(Record("running", {Phase(1, nullptr, "Building engine", 4, 6)}), 0);
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->progress, 4);
}

TEST(McpProgress, CancellingAndFailureSayWhy) {
  ProgressTracker t;
  std::optional<ProgressReport> c =
      t.Next(Record("cancelling", {Phase(1, nullptr, "Building engine", 1, 6)}), 0);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->message, "cancelling: waiting for TensorRT to finish the current step (Building engine 1/6)");
  json failed = Record("failed", {});
  failed["error"] = "out of memory";
  std::optional<ProgressReport> f = t.Next(failed, 0);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->message, "build failed: out of memory");
  EXPECT_GT(f->progress, c->progress);
}

TEST(McpProgress, GarbageRecordsSayNothing) {
  ProgressTracker t;
  EXPECT_FALSE(t.Next(json(), 0));
  EXPECT_FALSE(t.Next(json::array(), 0));
  EXPECT_FALSE(t.Next({{"status", 3}, {"phase", {{"active", {1, "x", nullptr}}}}}, 0));
}

}  // namespace
}  // namespace trtwatch::mcp
