#include "sinks/trace_sink.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "support/event_builders.h"

namespace trtwatch {
namespace {

using nlohmann::json;
using testing::PhaseFinish;
using testing::PhaseStart;

// Checks the format's rule: per tid, complete events nest (or are disjoint).
void ExpectNestedPerTid(const json& doc) {
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> lanes;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ASSERT_GE(e["dur"].get<int64_t>(), 0);
    lanes[e["tid"].get<int64_t>()].emplace_back(e["ts"].get<int64_t>(), e["ts"].get<int64_t>() + e["dur"].get<int64_t>());
  }
  for (auto& [tid, spans] : lanes) {
    // Sort by start, longest first, then check with a stack of open ends.
    std::sort(spans.begin(), spans.end(), [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<int64_t> ends;
    for (const auto& [start, end] : spans) {
      while (!ends.empty() && ends.back() <= start) ends.pop_back();
      if (!ends.empty()) {
        ASSERT_LE(end, ends.back()) << "tid " << tid << ": [" << start << ", " << end << ") overlaps";
      }
      ends.push_back(end);
    }
  }
}

TEST(TraceLanesTest, ChildrenShareTheParentLaneSiblingsTakeOthers) {
  TraceLanes lanes;
  EXPECT_EQ(lanes.Start(1, kNoPhase), 0u);
  EXPECT_EQ(lanes.Start(2, 1), 0u);  // child on the parent's lane
  EXPECT_EQ(lanes.Start(3, 2), 0u);
  EXPECT_EQ(lanes.Start(4, 2), 1u);  // concurrent sibling: a fresh lane
  EXPECT_EQ(lanes.Start(5, 4), 1u);
  EXPECT_EQ(lanes.Start(6, 2), 2u);
  EXPECT_TRUE(lanes.Finish(5).empty());
  EXPECT_TRUE(lanes.Finish(4).empty());
  EXPECT_EQ(lanes.Start(7, 2), 1u);  // an idle lane is reused
  EXPECT_EQ(lanes.lane_count(), 3u);
  // A parent that finishes before its child cuts the child on that lane.
  EXPECT_EQ(lanes.Finish(2), std::vector<int64_t>{3});
}

TEST(TraceBuilderTest, DocumentHasMetadataAndNestedCompleteEvents) {
  TraceBuilder trace;
  Event start;
  start.type = EventType::kBuildStart;
  start.build = "b1";
  start.backend = "simulated";
  start.facts = {{"profile", "small-cnn"}, {"seed", "1"}, {"speed", "1"}};
  trace.Apply(start);
  trace.Apply(PhaseStart(0.0, 1, kNoPhase, "Building engine", 2));
  trace.Apply(PhaseStart(0.1, 2, 1, "Timing graph nodes", 8));
  trace.Apply(PhaseStart(0.2, 3, 2, "node A"));
  trace.Apply(PhaseStart(0.25, 4, 2, "node B"));
  trace.Apply(PhaseFinish(0.3, 3));
  trace.Apply(PhaseFinish(0.4, 4, 2, 4));
  trace.Apply(PhaseFinish(0.5, 2, 8, 8));
  Event cancel;
  cancel.type = EventType::kCancelRequested;
  cancel.t = 0.55;
  cancel.reason = CancelReason::kSignal;
  cancel.message = "interrupted (SIGINT)";
  trace.Apply(cancel);
  trace.Apply(PhaseFinish(0.6, 1, 1, 2));
  Event finish;
  finish.type = EventType::kBuildFinish;
  finish.t = 0.6;
  finish.elapsed = 0.6;
  finish.status = BuildStatus::kCancelled;
  trace.Apply(finish);

  const json doc = json::parse(trace.Json());
  ASSERT_TRUE(doc["traceEvents"].is_array());
  std::map<std::string, json> by_name;
  int metadata = 0;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "M") ++metadata;
    by_name[e["name"].get<std::string>()] = e;
  }
  EXPECT_GE(metadata, 3);  // process name, and a name per lane
  EXPECT_NE(by_name["process_name"]["args"]["name"].get<std::string>().find("SIMULATED build of small-cnn"),
            std::string::npos);
  EXPECT_EQ(by_name["node A"]["ts"], 200000);
  EXPECT_EQ(by_name["node A"]["dur"], 100000);
  EXPECT_EQ(by_name["node B"]["args"]["early"], true);
  EXPECT_EQ(by_name["node B"]["args"]["steps"], "2/4");
  EXPECT_NE(by_name["node A"]["tid"], by_name["node B"]["tid"]);
  EXPECT_EQ(by_name["Timing graph nodes"]["tid"], by_name["Building engine"]["tid"]);
  EXPECT_EQ(by_name["build (cancelled)"]["dur"], 600000);
  EXPECT_EQ(by_name["cancel requested"]["ph"], "i");
  ExpectNestedPerTid(doc);
}

TEST(TraceBuilderTest, InvalidUtf8NamesAreReplacedNotThrown) {
  TraceBuilder trace;
  Event start;
  start.type = EventType::kBuildStart;
  start.build = "b1";
  start.model = "model-\xe2\x82";  // a character cut in half
  trace.Apply(start);
  trace.Apply(PhaseStart(0.0, 1, kNoPhase, "bad \xff\xfe name", 2));
  trace.Apply(PhaseFinish(0.5, 1, 2, 2));
  std::string text;
  ASSERT_NO_THROW(text = trace.Json());
  const json doc = json::parse(text);
  bool found = false;
  for (const json& e : doc["traceEvents"]) found = found || e["name"] == "bad \xef\xbf\xbd\xef\xbf\xbd name";
  EXPECT_TRUE(found) << text;
}

TEST(TraceBuilderTest, RandomConcurrentTreesNestPerTid) {
  // Random trees with concurrent siblings, finishes in any order that a builder with
  // several threads could produce (children before parents), plus out-of-order finishes.
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    std::mt19937 random(seed);
    TraceBuilder trace;
    std::vector<int64_t> open;
    std::map<int64_t, int64_t> parent_of;
    std::map<int64_t, int> children;
    double t = 0;
    int64_t next_id = 1;
    for (int i = 0; i < 200; ++i) {
      t += std::uniform_real_distribution<double>(0, 0.01)(random);
      const bool start = open.empty() || (open.size() < 12 && random() % 2 == 0);
      if (start) {
        const int64_t parent = open.empty() || random() % 5 == 0 ? kNoPhase : open[random() % open.size()];
        const int64_t id = next_id++;
        trace.Apply(PhaseStart(t, id, parent, "p" + std::to_string(id)));
        open.push_back(id);
        parent_of[id] = parent;
        ++children[parent];
      } else {
        // Usually a leaf; one time in ten any phase (an odd stream).
        std::vector<int64_t> leaves;
        for (int64_t id : open) {
          if (children[id] == 0) leaves.push_back(id);
        }
        const bool odd = random() % 10 == 0 || leaves.empty();
        const int64_t id = odd ? open[random() % open.size()] : leaves[random() % leaves.size()];
        trace.Apply(PhaseFinish(t, id));
        open.erase(std::find(open.begin(), open.end(), id));
        --children[parent_of[id]];
      }
    }
    const json doc = json::parse(trace.Json());  // phases still open end at the last time
    ExpectNestedPerTid(doc);
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << "seed " << seed;
      return;
    }
  }
}

TEST(TraceSinkTest, WritesAtomicallyAtCloseAndRejectsBadPaths) {
  const auto dir = std::filesystem::temp_directory_path() / ("trtwatch_trace_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "trace.json").string();
  std::string error;
  auto sink = TraceSink::Open(path, &error);
  ASSERT_TRUE(sink) << error;
  sink->OnEvent(PhaseStart(0, 1, kNoPhase, "Building engine"));
  sink->OnEvent(PhaseFinish(1, 1));
  EXPECT_FALSE(std::filesystem::exists(path));  // nothing before Close
  sink->Close();
  EXPECT_TRUE(sink->error().empty()) << sink->error();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(json::accept(text.str()));
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);  // no temporary file left beside it

  EXPECT_FALSE(TraceSink::Open((dir / "missing" / "t.json").string(), &error));
  EXPECT_NE(error.find("missing"), std::string::npos);
  EXPECT_FALSE(TraceSink::Open(dir.string(), &error));
  EXPECT_NE(error.find("folder"), std::string::npos) << error;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trtwatch
