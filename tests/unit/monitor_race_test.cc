// Monitor under hostile use: allocation failure inside callbacks, empty names, forced
// interleavings (a clock that parks a thread right after it reads the time), cancel
// races and a clock that starts at zero. Each test pins one defect of issue 14.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "core/dispatcher.h"
#include "core/monitor.h"
#include "support/failing_allocator.h"
#include "support/pausing_clock.h"
#include "support/recording_sink.h"
#include "support/stream_checks.h"
#include "support/fake_clock.h"

namespace trtwatch {
namespace {

using testing::ExpectWellFormedStream;
using testing::FailAllocationsOnThisThread;
using testing::OfType;
using testing::PausingClock;
using testing::RecordingSink;

constexpr int64_t kSecond = 1'000'000'000;

// Delivers what `monitor` holds (BuildReturned already called) and returns the stream.
std::vector<Event> Deliver(Monitor& monitor) {
  RecordingSink sink;
  Dispatcher dispatcher(monitor, {&sink}, DeliveryOptions{});
  dispatcher.Join();
  return sink.events();
}

// Runs `call` on its own thread, parked by `clock` right after its `nth` clock read;
// while it is parked, runs `meanwhile` on a third thread and gives it up to 200 ms
// (it may have to wait for a lock the parked thread holds), then resumes.
void Interleave(PausingClock& clock, int nth, const std::function<void()>& call,
                const std::function<void()>& meanwhile) {
  std::atomic<bool> armed{false};
  std::thread parked([&] {
    clock.PauseAfterRead(std::this_thread::get_id(), nth);
    armed.store(true);
    call();
  });
  while (!armed.load()) std::this_thread::yield();
  ASSERT_TRUE(clock.WaitUntilPaused());
  clock.AdvanceNs(kSecond);
  std::atomic<bool> done{false};
  std::thread other([&] {
    meanwhile();
    done.store(true);
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (!done.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  clock.Resume();
  parked.join();
  other.join();
}

// Defect 1: QueueStep recorded the step's place in the batch before the push that
// failed, so the next step wrote past the end of the pending batch.
TEST(MonitorRaceTest, AllocationFailureInAStepLosesOnlyThatStep) {
  FakeClock clock;
  Monitor m(clock);
  m.BuildStarted(BuildInfo{"b", "simulated", "m", {}, {}});
  m.Log(Severity::kInfo, "one line");
  m.phaseStart("root", nullptr, 4);
  m.phaseStart("child", "root", 3);
  {
    FailAllocationsOnThisThread oom;
    EXPECT_TRUE(m.stepComplete("child", 0));
  }
  EXPECT_TRUE(m.stepComplete("child", 1));
  m.phaseFinish("child");
  m.phaseFinish("root");
  m.BuildReturned(BuildOutcome{true, ""});
  const auto events = Deliver(m);
  ExpectWellFormedStream(events);
  const auto steps = OfType(events, EventType::kStep);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back().phase, "child");
  EXPECT_EQ(steps.back().step, 1);
  const auto finishes = OfType(events, EventType::kPhaseFinish);
  ASSERT_EQ(finishes.size(), 2u);
  EXPECT_EQ(finishes[0].completed, 2);
}

// Defect 1, phaseStart: the phase became active although its start event was lost, so
// its step and finish named an id never started.
TEST(MonitorRaceTest, AllocationFailureInPhaseStartLeavesNoHalfPhase) {
  FakeClock clock;
  Monitor m(clock);
  m.BuildStarted(BuildInfo{"b", "simulated", "m", {}, {}});
  m.phaseStart("r", nullptr, 4);
  m.phaseStart("s", "r", 1);
  m.phaseFinish("s");
  for (int i = 0; i < 4; ++i) m.Log(Severity::kInfo, "x");  // the batch is full: 8 of 8
  {
    FailAllocationsOnThisThread oom;
    m.phaseStart("c", "r", 2);
  }
  m.stepComplete("c", 0);
  m.phaseFinish("c");
  m.phaseFinish("r");
  const BuildResult result = m.BuildReturned(BuildOutcome{true, ""});
  ExpectWellFormedStream(Deliver(m));
  EXPECT_EQ(result.anomalies.step_unknown_phase + result.anomalies.finish_unknown_phase, 2);
}

// Defect 1, phaseFinish: the phase left the active set although its finish event was
// lost, so the stream had a start never finished.
TEST(MonitorRaceTest, AllocationFailureInPhaseFinishLeavesNoUnfinishedStart) {
  FakeClock clock;
  Monitor m(clock);
  m.BuildStarted(BuildInfo{"b", "simulated", "m", {}, {}});
  m.phaseStart("a", nullptr, 1);
  m.phaseFinish("a");
  m.phaseStart("a", nullptr, 1);
  for (int i = 0; i < 4; ++i) m.Log(Severity::kInfo, "x");  // the batch is full: 8 of 8
  {
    FailAllocationsOnThisThread oom;
    m.phaseFinish("a");
  }
  m.BuildReturned(BuildOutcome{true, ""});
  const auto events = Deliver(m);
  ExpectWellFormedStream(events);
  EXPECT_EQ(OfType(events, EventType::kPhaseFinish).size(), 2u);
}

// Defect 2: an empty name went out as "phase":"", which the schema forbids.
TEST(MonitorRaceTest, EmptyPhaseNameIsAnAnomalyNotAPhase) {
  FakeClock clock;
  Monitor m(clock);
  m.BuildStarted(BuildInfo{});
  m.phaseStart("", nullptr, 2);
  EXPECT_TRUE(m.stepComplete("", 0));
  m.phaseFinish("");
  const BuildResult result = m.BuildReturned(BuildOutcome{true, ""});
  const auto events = Deliver(m);
  ExpectWellFormedStream(events);
  EXPECT_TRUE(OfType(events, EventType::kPhaseStart).empty());
  EXPECT_EQ(result.anomalies.null_name, 3);
  EXPECT_TRUE(result.phases.empty());
}

// Defect 3: stepComplete dated its first `false` with the time read before it saw the
// cancel, so to_first_false came out negative. The step path now reads the clock only
// after it has seen the cancel, under the lock that dates it: parked at that read, with
// the clock moving and another thread refused meanwhile, the date stays in order.
TEST(MonitorRaceTest, ToFirstFalseIsNeverNegative) {
  PausingClock clock(5 * kSecond);
  Monitor m(clock);
  m.BuildStarted(BuildInfo{});
  m.phaseStart("p", nullptr, 4);
  ASSERT_TRUE(m.RequestCancel(CancelReason::kApi, "stop"));
  bool returned = true;
  bool other = true;
  Interleave(
      clock, 1, [&] { returned = m.stepComplete("p", 0); }, [&] { other = m.stepComplete("p", 1); });
  EXPECT_FALSE(returned);
  EXPECT_FALSE(other);
  const BuildResult result = m.BuildReturned(BuildOutcome{false, ""});
  ASSERT_TRUE(result.cancel_latency.has_value());
  ASSERT_TRUE(result.cancel_latency->to_first_false.has_value());
  EXPECT_GE(*result.cancel_latency->to_first_false, 0);
  EXPECT_GE(result.cancel_latency->to_return, *result.cancel_latency->to_first_false);
}

// Defect 4: phaseFinish measured with a time read before the lock; a same-named phase
// started in between was finished with a negative elapsed.
TEST(MonitorRaceTest, PhaseFinishElapsedIsNeverNegative) {
  PausingClock clock(5 * kSecond);
  Monitor m(clock);
  m.BuildStarted(BuildInfo{});
  m.phaseStart("x", nullptr, 1);
  Interleave(
      clock, 1, [&] { m.phaseFinish("x"); }, [&] { m.phaseStart("x", nullptr, 1); });
  m.phaseFinish("x");
  const BuildResult result = m.BuildReturned(BuildOutcome{true, ""});
  const auto events = Deliver(m);
  ExpectWellFormedStream(events);
  for (const Event& e : OfType(events, EventType::kPhaseFinish)) EXPECT_GE(e.elapsed, 0) << e.id;
  for (const PhaseSummary& p : result.phases) EXPECT_GE(p.seconds, 0) << p.phase;
}

// Defect 4, BuildReturned: it closed a phase started after its time was read.
TEST(MonitorRaceTest, BuildReturnedClosesPhasesWithNonNegativeTimes) {
  PausingClock clock(5 * kSecond);
  Monitor m(clock);
  m.BuildStarted(BuildInfo{});
  BuildResult result;
  Interleave(
      clock, 1, [&] { result = m.BuildReturned(BuildOutcome{false, "boom"}); },
      [&] { m.phaseStart("late", nullptr, 1); });
  const auto events = Deliver(m);
  ExpectWellFormedStream(events);
  for (const Event& e : OfType(events, EventType::kPhaseFinish)) EXPECT_GE(e.elapsed, 0);
  for (const PhaseSummary& p : result.phases) EXPECT_GE(p.seconds, 0) << p.phase;
  EXPECT_GE(result.elapsed, 0);
}

// Defect 7: a first refused step at clock value 0 was taken for "none yet".
TEST(MonitorRaceTest, ClockStartingAtZeroStillDatesTheFirstFalse) {
  FakeClock clock(0);
  Monitor m(clock);
  m.BuildStarted(BuildInfo{});
  m.phaseStart("p", nullptr, 4);
  ASSERT_TRUE(m.RequestCancel(CancelReason::kUser, "stop"));
  EXPECT_FALSE(m.stepComplete("p", 0));
  const BuildResult result = m.BuildReturned(BuildOutcome{false, ""});
  ASSERT_TRUE(result.cancel_latency.has_value());
  ASSERT_TRUE(result.cancel_latency->to_first_false.has_value());
  EXPECT_EQ(*result.cancel_latency->to_first_false, 0);
}

// A start line for racing threads: each Arrive()s, and all leave together.
class StartLine {
 public:
  explicit StartLine(int threads) : threads_(threads) {}
  void Arrive() {
    arrived_.fetch_add(1);
    while (arrived_.load() < threads_) {
    }
  }

 private:
  const int threads_;
  std::atomic<int> arrived_{0};
};

// Runs `trial` (given its number) over and over for a second: for races no clock read
// can force, each trial is one fresh chance to lose.
void RepeatForASecond(const std::function<void(int)>& trial) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (int n = 1; std::chrono::steady_clock::now() < until && !::testing::Test::HasFailure(); ++n) trial(n);
}

// Defect 5: RequestCancel set the flag before taking the lock; a BuildReturned in
// between concluded "cancelled" but no cancel_requested event was ever emitted.
// A race, not a forced interleaving: nothing reads the clock inside that window.
TEST(MonitorRaceTest, CancelledBuildAlwaysCarriesItsCancelRequested) {
  RepeatForASecond([](int trial) {
    FakeClock clock;
    Monitor m(clock);
    m.BuildStarted(BuildInfo{});
    StartLine start(2);
    std::thread canceller([&] {
      start.Arrive();
      m.RequestCancel(CancelReason::kUser, "stop");
    });
    start.Arrive();
    const BuildResult result = m.BuildReturned(BuildOutcome{false, ""});
    canceller.join();
    const auto events = Deliver(m);
    const bool cancelled = result.status == BuildStatus::kCancelled;
    ASSERT_EQ(cancelled, !OfType(events, EventType::kCancelRequested).empty()) << "trial " << trial;
    ASSERT_EQ(cancelled, result.cancel_latency.has_value());
  });
}

// Defect 6: a losing RequestCancel returned false ("already requested") while
// IsCancelRequested() was still false, and its thread's next step returned true.
TEST(MonitorRaceTest, LosingRequestCancelSeesTheCancel) {
  RepeatForASecond([](int trial) {
    FakeClock clock;
    Monitor m(clock);
    m.phaseStart("p", nullptr, 1 << 30);
    StartLine start(3);
    std::atomic<int> winners{0};
    std::atomic<int> violations{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&] {
        start.Arrive();
        if (m.RequestCancel(CancelReason::kUser, "stop")) {
          winners.fetch_add(1);
        } else if (!m.IsCancelRequested() || m.stepComplete("p", 1)) {
          violations.fetch_add(1);
        }
      });
    }
    for (auto& th : threads) th.join();
    ASSERT_EQ(winners.load(), 1);
    ASSERT_EQ(violations.load(), 0) << "trial " << trial;
    m.BuildReturned(BuildOutcome{false, ""});
  });
}

}  // namespace
}  // namespace trtwatch
