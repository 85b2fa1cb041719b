#include "backends/simulated/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "core/build_session.h"
#include "core/clock.h"
#include "support/recording_sink.h"
#include "support/stream_checks.h"

namespace trtwatch::sim {
namespace {

using trtwatch::testing::ExpectWellFormedStream;
using trtwatch::testing::RecordingSink;

Profile Load(const std::string& name) {
  std::string error;
  auto profile = LoadProfile(name, &error);
  EXPECT_TRUE(profile.has_value()) << error;
  return profile.value_or(Profile{});
}

struct SimRun {
  BuildResult result;
  std::vector<Event> events;
};

SimRun Simulate(const std::string& profile, double speed, uint64_t seed = 1,
             const std::function<void(Monitor&)>& during = nullptr) {
  SimulatedBackend backend(Load(profile), SimulationOptions{seed, speed});
  RecordingSink sink;
  BuildSession session(SteadyClock::Instance(), {&sink}, SessionOptions{});
  std::thread side;
  if (during) side = std::thread([&] { during(session.monitor()); });
  SimRun run;
  run.result = session.Run(backend.Describe(), [&](Monitor& m) { return backend.Build(m); });
  if (side.joinable()) side.join();
  run.events = sink.events();
  return run;
}

int MaxDepth(const std::vector<Event>& events) {
  std::map<int64_t, int> depth;
  int max = 0;
  for (const Event& e : events) {
    if (e.type != EventType::kPhaseStart) continue;
    depth[e.id] = e.parent == kNoPhase ? 0 : depth[e.parent] + 1;
    max = std::max(max, depth[e.id]);
  }
  return max;
}

TEST(SimulatorTest, BuiltinProfilesParse) {
  for (const std::string& name : BuiltinProfileNames()) {
    std::string error;
    EXPECT_TRUE(LoadProfile(name, &error).has_value()) << name << ": " << error;
  }
  EXPECT_EQ(BuiltinProfileNames().size(), 4u);
}

TEST(SimulatorTest, Trt87MnistFollowsTheVerifiedTree) {
  const SimRun run = Simulate("trt87-mnist", 20);
  ExpectWellFormedStream(run.events);
  EXPECT_EQ(run.result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(MaxDepth(run.events), 5);  // 6 levels, as in NVIDIA's README
  int times212 = 0;
  for (const Event& e : run.events) {
    if (e.type == EventType::kPhaseStart && e.phase == "Finding fastest tactic for Times212") times212 = e.total;
  }
  EXPECT_EQ(times212, 37);
}

TEST(SimulatorTest, SmallCnnLooksLikeATensorRTBuild) {
  const SimRun run = Simulate("small-cnn", 20);
  ExpectWellFormedStream(run.events);
  EXPECT_EQ(run.result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(run.result.anomalies.Total(), 0);
  EXPECT_EQ(MaxDepth(run.events), 7);  // 8 levels
  // The same name at two depths.
  std::map<std::string, std::set<int>> depths;
  std::map<int64_t, int> depth;
  for (const Event& e : run.events) {
    if (e.type != EventType::kPhaseStart) continue;
    depth[e.id] = e.parent == kNoPhase ? 0 : depth[e.parent] + 1;
    depths[e.phase].insert(depth[e.id]);
  }
  EXPECT_GE(depths["Evaluating tactic times"].size(), 2u);
  EXPECT_EQ(run.events.front().backend, "simulated");
}

TEST(SimulatorTest, SameSeedSamePlanOtherSeedOtherPlan) {
  const Profile profile = Load("large-transformer");
  const Plan a = MakePlan(profile, 7), b = MakePlan(profile, 7), c = MakePlan(profile, 8);
  EXPECT_EQ(a.phase_count, b.phase_count);
  EXPECT_EQ(a.total_us, b.total_us);
  EXPECT_NE(a.total_us, c.total_us);
  // Minutes of serial work at speed 1, as the profile promises.
  EXPECT_GT(a.total_us, 120LL * 1000 * 1000);
}

TEST(SimulatorTest, WorkersCallTheMonitorFromSeveralThreads) {
  // large-transformer times graph nodes on 4 threads: several of its phases are
  // active at once under one parent.
  const SimRun run = Simulate("large-transformer", 5, 1, [](Monitor& m) {
    while (!m.IsCancelRequested()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (m.SecondsSinceStart() > 6) m.RequestCancel(CancelReason::kApi, "enough");
    }
  });
  ExpectWellFormedStream(run.events);
  std::map<int64_t, int64_t> parent_of;
  std::map<int64_t, int> active_children;
  int max_concurrent = 0;
  for (const Event& e : run.events) {
    if (e.type == EventType::kPhaseStart) {
      parent_of[e.id] = e.parent;
      max_concurrent = std::max(max_concurrent, ++active_children[e.parent]);
    } else if (e.type == EventType::kPhaseFinish) {
      --active_children[parent_of[e.id]];
    }
  }
  EXPECT_GE(max_concurrent, 2);
  EXPECT_EQ(run.result.status, BuildStatus::kCancelled);
}

TEST(SimulatorTest, HonoursCancellationLikeTensorRT) {
  const SimRun run = Simulate("small-cnn", 4, 3, [](Monitor& m) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    m.RequestCancel(CancelReason::kUser, "stop");
  });
  ExpectWellFormedStream(run.events);
  EXPECT_EQ(run.result.status, BuildStatus::kCancelled);
  EXPECT_EQ(run.result.anomalies.unfinished_phases, 0);  // it finished its own phases
  bool early = false;
  for (const Event& e : run.events) early = early || (e.type == EventType::kPhaseFinish && e.early);
  EXPECT_TRUE(early);
  ASSERT_TRUE(run.result.cancel_latency.has_value());
  EXPECT_TRUE(run.result.cancel_latency->to_first_false.has_value());
  EXPECT_LT(run.result.cancel_latency->to_return, 1.0);
}

TEST(SimulatorTest, FailingProfileFailsInsideTheNamedPhase) {
  const SimRun run = Simulate("failing", 20);
  ExpectWellFormedStream(run.events);
  EXPECT_EQ(run.result.status, BuildStatus::kFailed);
  EXPECT_NE(run.result.error.find("Could not find any implementation"), std::string::npos);
  bool error_logged = false, named_phase_early = false;
  for (const Event& e : run.events) {
    error_logged = error_logged || (e.type == EventType::kLog && e.severity == Severity::kError);
    named_phase_early = named_phase_early ||
                        (e.type == EventType::kPhaseFinish && e.phase == "Timing graph nodes" && e.early);
  }
  EXPECT_TRUE(error_logged);
  EXPECT_TRUE(named_phase_early);
}

// The sum of every phase's own step durations.
int64_t StepTime(const PlanPhase& p) {
  int64_t us = 0;
  for (size_t step = 0; step < p.step_us.size(); ++step) {
    us += p.step_us[step];
    for (const PlanPhase& child : p.children[step]) us += StepTime(child);
  }
  return us;
}

TEST(SimulatorTest, VariationChangesDurationsFromSeedToSeedNeverTheTree) {
  std::string error;
  const std::optional<Profile> steady = ParseProfile(R"({"base": "small-cnn"})", &error);
  const std::optional<Profile> varied =
      ParseProfile(R"({"base": "small-cnn", "variation": {"build": 0.2, "phase": 0.1}})", &error);
  ASSERT_TRUE(steady && varied) << error;
  std::vector<double> ratios;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Plan base = MakePlan(*steady, seed), plan = MakePlan(*varied, seed);
    EXPECT_EQ(plan.phase_count, base.phase_count) << "the same tree for the seed";
    EXPECT_EQ(MakePlan(*varied, seed).total_us, plan.total_us) << "the same durations for the seed";
    EXPECT_EQ(StepTime(plan.root), plan.total_us);
    ratios.push_back(static_cast<double>(plan.total_us) / static_cast<double>(base.total_us));
  }
  const auto [low, high] = std::minmax_element(ratios.begin(), ratios.end());
  // e^(±0.2) overall, e^(±0.1) per phase (averaged over ~200 phases): spread, within bounds.
  EXPECT_GE(*low, 0.74);
  EXPECT_LE(*high, 1.35);
  EXPECT_GT(*high - *low, 0.2) << "builds of one profile vary from seed to seed";
}

TEST(SimulatorTest, ProfileErrorsNameTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {"{", "not valid JSON"},
      {R"({"root": {"steps": 2}})", "\"name\" must be a non-empty string"},
      {R"({"root": {"name": "a"}})", "\"steps\" is required"},
      {R"({"root": {"name": "a", "steps": [5, 2]}})", "low > high"},
      {R"({"root": {"name": "a", "steps": 1, "colour": 1}})", "unknown field \"colour\""},
      {R"({"root": {"name": "a", "steps": 2, "workers": 2, "children": [{"name": "b", "steps": 1}]}})", "{step}"},
      {R"({"base": "nope"})", "not a built-in profile"},
      {R"({"name": "x"})", "either \"root\""},
      {R"({"base": "small-cnn", "variation": {"build": 2}})", "variation.build: expected a number from 0"},
      {R"({"base": "small-cnn", "variation": {"phse": 0.1}})", "unknown field \"phse\""},
      {R"({"base": "small-cnn", "variation": 0.1})", "variation: expected {"}};
  for (const auto& [text, expected] : cases) {
    std::string error;
    EXPECT_FALSE(ParseProfile(text, &error).has_value()) << text;
    EXPECT_NE(error.find(expected), std::string::npos) << text << " -> " << error;
  }
  std::string error;
  EXPECT_FALSE(LoadProfile("no-such-profile", &error).has_value());
  EXPECT_NE(error.find("small-cnn"), std::string::npos) << "lists the built-ins: " << error;
}

}  // namespace
}  // namespace trtwatch::sim
