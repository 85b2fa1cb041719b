// Monitor: phase identity, odd sequences, cancellation, results. Driven on a FakeClock
// and read through a real Dispatcher into a RecordingSink.
#include "core/monitor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string_view>
#include <thread>
#include <vector>

#include "core/build_session.h"
#include "core/clock.h"
#include "support/fake_clock.h"
#include "support/recording_sink.h"
#include "support/stream_checks.h"

namespace trtwatch {
namespace {

using testing::ExpectWellFormedStream;
using testing::OfType;
using testing::RecordingSink;

// One build on a fake clock: drive the monitor in `body`, return what the sink saw.
struct Harness {
  FakeClock clock;
  RecordingSink sink;
  BuildResult result;

  std::vector<Event> Run(const std::function<BuildOutcome(Monitor&, FakeClock&)>& body) {
    BuildSession session(clock, {&sink}, SessionOptions{});
    result = session.Run(BuildInfo{"b_test", "simulated", "m", {}, {}},
                         [&](Monitor& m) { return body(m, clock); });
    return sink.events();
  }
};

TEST(MonitorTest, NestedPhasesGetIdsParentsAndDurations) {
  Harness h;
  auto events = h.Run([](Monitor& m, FakeClock& clock) {
    m.phaseStart("Building engine", nullptr, 2);
    m.phaseStart("Optimizing graph", "Building engine", 3);
    clock.AdvanceSeconds(1.5);
    EXPECT_TRUE(m.stepComplete("Optimizing graph", 0));
    EXPECT_TRUE(m.stepComplete("Optimizing graph", 1));
    EXPECT_TRUE(m.stepComplete("Optimizing graph", 2));
    m.phaseFinish("Optimizing graph");
    EXPECT_TRUE(m.stepComplete("Building engine", 0));
    EXPECT_TRUE(m.stepComplete("Building engine", 1));
    m.phaseFinish("Building engine");
    return BuildOutcome{true, ""};
  });
  ExpectWellFormedStream(events);
  auto starts = OfType(events, EventType::kPhaseStart);
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0].parent, kNoPhase);
  EXPECT_EQ(starts[1].parent, starts[0].id);
  EXPECT_NE(starts[0].id, starts[1].id);
  auto finishes = OfType(events, EventType::kPhaseFinish);
  ASSERT_EQ(finishes.size(), 2u);
  EXPECT_EQ(finishes[0].phase, "Optimizing graph");
  EXPECT_EQ(finishes[0].completed, 3);
  EXPECT_FALSE(finishes[0].early);
  EXPECT_DOUBLE_EQ(finishes[0].elapsed, 1.5);
  EXPECT_EQ(h.result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(h.result.anomalies.Total(), 0);
  ASSERT_EQ(h.result.phases.size(), 2u);
  EXPECT_EQ(h.result.phases[0].phase, "Building engine");  // most time first (ties: stable)
}

TEST(MonitorTest, NamesAreCopied) {
  Harness h;
  auto events = h.Run([](Monitor& m, FakeClock&) {
    char name[32] = "Timing graph nodes";
    m.phaseStart(name, nullptr, 2);
    std::fill(std::begin(name), std::end(name), 'x');  // TensorRT promises no lifetime
    name[31] = '\0';
    EXPECT_TRUE(m.stepComplete("Timing graph nodes", 0));
    m.phaseFinish("Timing graph nodes");
    return BuildOutcome{true, ""};
  });
  auto finishes = OfType(events, EventType::kPhaseFinish);
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(finishes[0].phase, "Timing graph nodes");
  EXPECT_EQ(finishes[0].completed, 1);
  EXPECT_EQ(h.result.anomalies.Total(), 0);
}

TEST(MonitorTest, SameNameAtTwoDepthsResolvesToMostRecentActive) {
  Harness h;
  auto events = h.Run([](Monitor& m, FakeClock&) {
    m.phaseStart("Evaluating tactic times", nullptr, 5);
    m.phaseStart("Computing reformatting costs", "Evaluating tactic times", 1);
    m.phaseStart("Evaluating tactic times", "Computing reformatting costs", 3);
    m.stepComplete("Evaluating tactic times", 2);  // the inner one
    m.phaseFinish("Evaluating tactic times");       // the inner one
    m.phaseFinish("Computing reformatting costs");
    m.stepComplete("Evaluating tactic times", 0);  // now the outer one
    m.phaseFinish("Evaluating tactic times");
    return BuildOutcome{true, ""};
  });
  ExpectWellFormedStream(events);
  auto starts = OfType(events, EventType::kPhaseStart);
  auto finishes = OfType(events, EventType::kPhaseFinish);
  ASSERT_EQ(finishes.size(), 3u);
  EXPECT_EQ(finishes[0].id, starts[2].id);
  EXPECT_EQ(finishes[0].completed, 3);
  EXPECT_EQ(finishes[2].id, starts[0].id);
  EXPECT_EQ(finishes[2].completed, 1);
  EXPECT_TRUE(finishes[2].early);
  EXPECT_EQ(h.result.anomalies.Total(), 0);
}

TEST(MonitorTest, SameNamedPhasesOnConcurrentThreadsEachGetTheirOwnSteps) {
  Harness h;
  auto events = h.Run([](Monitor& m, FakeClock&) {
    m.phaseStart("Timing graph nodes", nullptr, 4);
    std::vector<std::thread> workers;
    for (int w = 0; w < 4; ++w) {
      workers.emplace_back([&m, w] {
        const std::string node = "Finding fastest tactic for node " + std::to_string(w);
        m.phaseStart(node.c_str(), "Timing graph nodes", 1);
        for (int round = 0; round < 50; ++round) {
          m.phaseStart("Measuring tactic time", node.c_str(), 2 + w % 2);
          for (int s = 0; s < 2 + w % 2; ++s) m.stepComplete("Measuring tactic time", s);
          m.phaseFinish("Measuring tactic time");
        }
        m.stepComplete(node.c_str(), 0);
        m.phaseFinish(node.c_str());
        m.stepComplete("Timing graph nodes", w);  // the parent is another thread's
      });
    }
    for (auto& t : workers) t.join();
    m.phaseFinish("Timing graph nodes");
    return BuildOutcome{true, ""};
  });
  ExpectWellFormedStream(events);
  EXPECT_EQ(h.result.anomalies.Total(), 0);
  for (const Event& e : events) {
    if (e.type == EventType::kPhaseFinish) {
      EXPECT_FALSE(e.early) << e.phase << " " << e.id << " finished at " << e.completed << "/" << e.total;
    }
  }
}

TEST(MonitorTest, NameReusedAfterFinishIsANewInstance) {
  Harness h;
  auto events = h.Run([](Monitor& m, FakeClock&) {
    for (int i = 0; i < 3; ++i) {
      m.phaseStart("Measuring tactic time", nullptr, 2);
      m.stepComplete("Measuring tactic time", 0);
      m.stepComplete("Measuring tactic time", 1);
      m.phaseFinish("Measuring tactic time");
    }
    return BuildOutcome{true, ""};
  });
  ExpectWellFormedStream(events);
  auto starts = OfType(events, EventType::kPhaseStart);
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_NE(starts[0].id, starts[1].id);
  EXPECT_NE(starts[1].id, starts[2].id);
  ASSERT_EQ(h.result.phases.size(), 1u);
  EXPECT_EQ(h.result.phases[0].count, 3);
}

// The summary of one phase name, or a failed expectation.
const PhaseSummary* SummaryOf(const BuildResult& result, std::string_view phase) {
  for (const PhaseSummary& p : result.phases) {
    if (p.phase == phase) return &p;
  }
  ADD_FAILURE() << "no summary for " << phase;
  return nullptr;
}

TEST(MonitorTest, SelfTimeIsTotalLessDirectChildren) {
  Harness h;
  auto events = h.Run([](Monitor& m, FakeClock& clock) {
    m.phaseStart("Building engine", nullptr, 1);             // t=0
    clock.AdvanceSeconds(1);
    m.phaseStart("Optimizing graph", "Building engine", 1);  // t=1
    clock.AdvanceSeconds(1);
    m.phaseStart("Fusing layers", "Optimizing graph", 1);    // t=2
    clock.AdvanceSeconds(2);
    m.phaseFinish("Fusing layers");                          // t=4: 2 s, all its own
    clock.AdvanceSeconds(1);
    m.phaseFinish("Optimizing graph");                       // t=5: 4 s, 2 s its own
    for (double seconds : {1.0, 1.5}) {                      // two instances of one name
      m.phaseStart("Timing", "Building engine", 1);
      clock.AdvanceSeconds(seconds);
      m.phaseFinish("Timing");
    }
    clock.AdvanceSeconds(0.5);
    m.phaseFinish("Building engine");  // t=8: 8 s less 4 + 1 + 1.5 of children
    return BuildOutcome{true, ""};
  });
  ExpectWellFormedStream(events);
  const PhaseSummary* engine = SummaryOf(h.result, "Building engine");
  const PhaseSummary* optimizing = SummaryOf(h.result, "Optimizing graph");
  const PhaseSummary* fusing = SummaryOf(h.result, "Fusing layers");
  const PhaseSummary* timing = SummaryOf(h.result, "Timing");
  ASSERT_TRUE(engine && optimizing && fusing && timing);
  EXPECT_DOUBLE_EQ(engine->seconds, 8.0);
  EXPECT_DOUBLE_EQ(engine->self_seconds, 1.5);  // only direct children count, not "Fusing layers"
  EXPECT_DOUBLE_EQ(optimizing->seconds, 4.0);
  EXPECT_DOUBLE_EQ(optimizing->self_seconds, 2.0);
  EXPECT_DOUBLE_EQ(fusing->seconds, 2.0);
  EXPECT_DOUBLE_EQ(fusing->self_seconds, 2.0);
  EXPECT_EQ(timing->count, 2);
  EXPECT_DOUBLE_EQ(timing->seconds, 2.5);
  EXPECT_DOUBLE_EQ(timing->self_seconds, 2.5);
  // build_finish carries the same summary.
  const auto finish = OfType(events, EventType::kBuildFinish);
  ASSERT_EQ(finish.size(), 1u);
  ASSERT_EQ(finish[0].phases.size(), 4u);
  EXPECT_EQ(finish[0].phases[0].phase, "Building engine");
  EXPECT_DOUBLE_EQ(finish[0].phases[0].self_seconds, 1.5);
}

TEST(MonitorTest, SelfTimeTakesOutSideBySideChildrenOnce) {
  Harness h;
  h.Run([](Monitor& m, FakeClock& clock) {
    m.phaseStart("Timing graph nodes", nullptr, 2);  // t=0
    m.phaseStart("Node A", "Timing graph nodes", 1);  // [0, 2]
    clock.AdvanceSeconds(1);
    m.phaseStart("Node B", "Timing graph nodes", 1);  // [1, 3], as on a second thread
    clock.AdvanceSeconds(1);
    m.phaseFinish("Node A");
    clock.AdvanceSeconds(1);
    m.phaseFinish("Node B");
    clock.AdvanceSeconds(1);
    m.phaseStart("Node C", "Timing graph nodes", 1);  // [4, 4.5]
    clock.AdvanceSeconds(0.5);
    m.phaseFinish("Node C");
    clock.AdvanceSeconds(0.5);
    m.phaseFinish("Timing graph nodes");  // 5 s; children cover [0, 3] and [4, 4.5]
    return BuildOutcome{true, ""};
  });
  const PhaseSummary* parent = SummaryOf(h.result, "Timing graph nodes");
  ASSERT_NE(parent, nullptr);
  EXPECT_DOUBLE_EQ(parent->seconds, 5.0);
  EXPECT_DOUBLE_EQ(parent->self_seconds, 1.5);  // not 5 - (2 + 2 + 0.5)
}

TEST(MonitorTest, SelfTimeOfAParentFinishedBeforeItsChildEndsThere) {
  Harness h;
  h.Run([](Monitor& m, FakeClock& clock) {
    m.phaseStart("Outer", nullptr, 1);
    clock.AdvanceSeconds(1);
    m.phaseStart("Inner", "Outer", 1);
    clock.AdvanceSeconds(2);
    m.phaseFinish("Outer");  // out of order: "Inner" still runs
    clock.AdvanceSeconds(1);
    m.phaseFinish("Inner");
    return BuildOutcome{true, ""};
  });
  const PhaseSummary* outer = SummaryOf(h.result, "Outer");
  const PhaseSummary* inner = SummaryOf(h.result, "Inner");
  ASSERT_TRUE(outer && inner);
  EXPECT_DOUBLE_EQ(outer->seconds, 3.0);
  EXPECT_DOUBLE_EQ(outer->self_seconds, 1.0);
  EXPECT_DOUBLE_EQ(inner->self_seconds, 3.0);
}

TEST(MonitorTest, SelfTimeOfPhasesOpenAtTheEndRunsToTheEnd) {
  Harness h;
  h.Run([](Monitor& m, FakeClock& clock) {
    m.phaseStart("Building engine", nullptr, 1);
    clock.AdvanceSeconds(1);
    m.phaseStart("Timing", "Building engine", 4);
    clock.AdvanceSeconds(2);
    return BuildOutcome{false, "cut off"};  // both still open: closed innermost first
  });
  EXPECT_EQ(h.result.anomalies.unfinished_phases, 2);
  const PhaseSummary* engine = SummaryOf(h.result, "Building engine");
  const PhaseSummary* timing = SummaryOf(h.result, "Timing");
  ASSERT_TRUE(engine && timing);
  EXPECT_DOUBLE_EQ(engine->seconds, 3.0);
  EXPECT_DOUBLE_EQ(engine->self_seconds, 1.0);
  EXPECT_DOUBLE_EQ(timing->seconds, 2.0);
  EXPECT_DOUBLE_EQ(timing->self_seconds, 2.0);
}

TEST(MonitorTest, OddSequencesAreCountedAndNeverCorruptTheTree) {
  Harness h;
  auto events = h.Run([](Monitor& m, FakeClock&) {
    m.phaseFinish("never started");                 // finish_unknown_phase
    EXPECT_TRUE(m.stepComplete("never started", 0));  // step_unknown_phase
    m.phaseStart(nullptr, nullptr, 3);               // null_name
    EXPECT_TRUE(m.stepComplete(nullptr, 0));         // null_name
    m.phaseFinish(nullptr);                          // null_name
    m.phaseStart("orphan", "no such parent", 2);     // unknown_parent -> attached at root
    EXPECT_TRUE(m.stepComplete("orphan", 2));        // step_out_of_range (total 2)
    EXPECT_TRUE(m.stepComplete("orphan", -1));       // step_out_of_range
    m.phaseStart("empty", "orphan", 0);              // bad_step_count
    m.phaseStart("negative", "orphan", -4);          // bad_step_count
    m.phaseStart("left open", "orphan", 1);          // unfinished_phases at return
    return BuildOutcome{false, "boom"};
  });
  ExpectWellFormedStream(events);
  const Anomalies& a = h.result.anomalies;
  EXPECT_EQ(a.finish_unknown_phase, 1);
  EXPECT_EQ(a.step_unknown_phase, 1);
  EXPECT_EQ(a.null_name, 3);
  EXPECT_EQ(a.unknown_parent, 1);
  EXPECT_EQ(a.step_out_of_range, 2);
  EXPECT_EQ(a.bad_step_count, 2);
  EXPECT_EQ(a.unfinished_phases, 4);  // orphan, empty, negative, left open
  auto starts = OfType(events, EventType::kPhaseStart);
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(starts[0].parent, kNoPhase);
  EXPECT_EQ(starts[1].total, 0);
  EXPECT_EQ(starts[2].total, 0);
  EXPECT_EQ(h.result.status, BuildStatus::kFailed);
  EXPECT_EQ(h.result.error, "boom");
  EXPECT_EQ(events.back().anomalies.Total(), a.Total());
}

TEST(MonitorTest, CallbacksAfterTheBuildReturnedAreCounted) {
  FakeClock clock;
  RecordingSink sink;
  BuildSession session(clock, {&sink}, SessionOptions{});
  session.Run(BuildInfo{}, [](Monitor&) { return BuildOutcome{true, ""}; });
  session.monitor().phaseStart("late", nullptr, 1);
  EXPECT_TRUE(session.monitor().stepComplete("late", 0));
  const BuildResult again = session.monitor().BuildReturned(BuildOutcome{true, ""});
  EXPECT_EQ(again.status, BuildStatus::kSucceeded);
  EXPECT_EQ(again.anomalies.after_build, 0);  // the result was concluded before them
}

TEST(MonitorTest, StepCompleteReturnsFalseFromTheFirstCallAfterCancelOnEveryThread) {
  Harness h;
  auto events = h.Run([](Monitor& m, FakeClock& clock) {
    m.phaseStart("root", nullptr, 100);
    EXPECT_TRUE(m.stepComplete("root", 0));
    clock.AdvanceSeconds(2);
    std::thread canceller([&] { EXPECT_TRUE(m.RequestCancel(CancelReason::kUser, "stop")); });
    canceller.join();
    EXPECT_FALSE(m.RequestCancel(CancelReason::kTimeout, "late"));  // requested once
    clock.AdvanceSeconds(0.25);
    std::atomic<int> refused{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) {
      threads.emplace_back([&] { refused += m.stepComplete("root", 1) ? 0 : 1; });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(refused.load(), 8);
    clock.AdvanceSeconds(0.5);
    m.phaseFinish("root");
    return BuildOutcome{false, ""};
  });
  ExpectWellFormedStream(events);
  EXPECT_EQ(h.result.status, BuildStatus::kCancelled);
  ASSERT_TRUE(h.result.cancel_reason.has_value());
  EXPECT_EQ(*h.result.cancel_reason, CancelReason::kUser);
  EXPECT_EQ(h.result.error, "stop");
  ASSERT_TRUE(h.result.cancel_latency.has_value());
  ASSERT_TRUE(h.result.cancel_latency->to_first_false.has_value());
  EXPECT_DOUBLE_EQ(*h.result.cancel_latency->to_first_false, 0.25);
  EXPECT_DOUBLE_EQ(h.result.cancel_latency->to_return, 0.75);
  auto cancels = OfType(events, EventType::kCancelRequested);
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].reason, CancelReason::kUser);
  EXPECT_DOUBLE_EQ(cancels[0].t, 2.0);
  auto finishes = OfType(events, EventType::kPhaseFinish);
  EXPECT_TRUE(finishes[0].early);
}

TEST(MonitorTest, TimeoutCancelConcludesTimedOut) {
  Harness h;
  h.Run([](Monitor& m, FakeClock&) {
    m.RequestCancel(CancelReason::kTimeout, "budget");
    return BuildOutcome{false, ""};
  });
  EXPECT_EQ(h.result.status, BuildStatus::kTimedOut);
  ASSERT_TRUE(h.result.cancel_latency.has_value());
  EXPECT_FALSE(h.result.cancel_latency->to_first_false.has_value());  // no step came
}

TEST(MonitorTest, AnEngineBuiltDespiteALateCancelStillSucceeds) {
  Harness h;
  h.Run([](Monitor& m, FakeClock&) {
    m.RequestCancel(CancelReason::kUser, "too late");
    return BuildOutcome{true, ""};
  });
  EXPECT_EQ(h.result.status, BuildStatus::kSucceeded);
  EXPECT_TRUE(h.result.error.empty());
}

TEST(MonitorTest, FailureWithoutCancelIsFailedWithTheBackendsError) {
  Harness h;
  h.Run([](Monitor&, FakeClock&) { return BuildOutcome{false, ""}; });
  EXPECT_EQ(h.result.status, BuildStatus::kFailed);
  EXPECT_FALSE(h.result.error.empty());
}

TEST(MonitorTest, StepsOfOnePhaseCoalesceButFinishesAreNeverLost) {
  Harness h;
  auto events = h.Run([](Monitor& m, FakeClock&) {
    for (int i = 0; i < 200; ++i) {
      const std::string name = "phase " + std::to_string(i);
      m.phaseStart(name.c_str(), nullptr, 1000);
      for (int s = 0; s < 1000; ++s) m.stepComplete(name.c_str(), s);
      m.phaseFinish(name.c_str());
    }
    return BuildOutcome{true, ""};
  });
  ExpectWellFormedStream(events);
  EXPECT_EQ(OfType(events, EventType::kPhaseStart).size(), 200u);
  EXPECT_EQ(OfType(events, EventType::kPhaseFinish).size(), 200u);
  EXPECT_LT(OfType(events, EventType::kStep).size(), 200u * 1000u / 10);
  for (const Event& f : OfType(events, EventType::kPhaseFinish)) EXPECT_EQ(f.completed, 1000);
}

// Counts clock reads: the step path must not read the clock (it was most of its cost).
class CountingClock final : public Clock {
 public:
  int64_t NowNs() const noexcept override {
    reads_.fetch_add(1, std::memory_order_relaxed);
    return now_ns_.load(std::memory_order_relaxed);
  }
  void AdvanceSeconds(int64_t s) { now_ns_.fetch_add(s * 1'000'000'000, std::memory_order_relaxed); }
  int64_t reads() const { return reads_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> now_ns_{1'000'000'000};
  mutable std::atomic<int64_t> reads_{0};
};

TEST(MonitorTest, StepsReadNoClock) {
  CountingClock clock;
  Monitor m(clock);
  m.phaseStart("p", nullptr, 1000);
  const int64_t before = clock.reads();
  for (int s = 0; s < 1000; ++s) EXPECT_TRUE(m.stepComplete("p", s));
  EXPECT_EQ(clock.reads(), before);
}

// The stall watch learns of steps from the step counts: every step moves them, also
// one that raises nothing, and also after a phase finished (its steps leave the active
// phases but not the total).
TEST(MonitorTest, LastCallbackNsSeesEveryStep) {
  CountingClock clock;
  Monitor m(clock);
  const int64_t t0 = m.LastCallbackNs();
  clock.AdvanceSeconds(1);
  m.phaseStart("a", nullptr, 10);
  m.phaseStart("b", nullptr, 10);
  const int64_t started = m.LastCallbackNs();
  EXPECT_EQ(started, t0 + 1'000'000'000);  // phase callbacks are dated when they happen
  for (int s = 0; s < 5; ++s) {
    m.stepComplete("a", s);
    m.stepComplete("b", s);
  }
  clock.AdvanceSeconds(1);
  const int64_t stepped = m.LastCallbackNs();  // dated when seen
  EXPECT_EQ(stepped, started + 1'000'000'000);
  clock.AdvanceSeconds(1);
  EXPECT_EQ(m.LastCallbackNs(), stepped);  // nothing new
  m.stepComplete("a", 2);                 // not newer: raises nothing, still a callback
  clock.AdvanceSeconds(1);
  const int64_t repeated = m.LastCallbackNs();
  EXPECT_EQ(repeated, stepped + 2'000'000'000);
  clock.AdvanceSeconds(1);
  m.phaseFinish("a");  // the active phases' steps drop by 5 ...
  const int64_t finished = m.LastCallbackNs();
  EXPECT_EQ(finished, repeated + 1'000'000'000);
  for (int s = 5; s < 10; ++s) m.stepComplete("b", s);  // ... and rise by 5 again
  clock.AdvanceSeconds(1);
  EXPECT_EQ(m.LastCallbackNs(), finished + 1'000'000'000);
  m.stepComplete("nope", 0);  // an anomaly is a callback too
  clock.AdvanceSeconds(1);
  EXPECT_EQ(m.LastCallbackNs(), finished + 2'000'000'000);
}

TEST(MonitorTest, ExceptionFromTheBackendEndsTheBuildAsFailed) {
  Harness h;
  h.Run([](Monitor&, FakeClock&) -> BuildOutcome { throw std::runtime_error("parser exploded"); });
  EXPECT_EQ(h.result.status, BuildStatus::kFailed);
  EXPECT_EQ(h.result.error, "parser exploded");
}

}  // namespace
}  // namespace trtwatch
