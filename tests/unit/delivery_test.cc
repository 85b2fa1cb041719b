// Delivery: dispatcher and sink channels. A stalled sink must not slow callbacks,
// must lose only coalescable events, and must learn how many it lost.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/build_session.h"
#include "core/clock.h"
#include "core/sink_channel.h"
#include "support/recording_sink.h"
#include "support/stream_checks.h"

namespace trtwatch {
namespace {

using testing::ExpectWellFormedStream;
using testing::RecordingSink;

// A sink that blocks until released: a terminal whose user pressed Ctrl+S.
class BlockedSink : public RecordingSink {
 public:
  void OnEvent(const Event& event) override {
    {
      MutexLock lock(&mu_);
      while (!released_) cv_.Wait(&mu_);
    }
    RecordingSink::OnEvent(event);
  }
  void Release() {
    {
      MutexLock lock(&mu_);
      released_ = true;
    }
    cv_.SignalAll();
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool released_ GUARDED_BY(mu_) = false;
};

TEST(DeliveryTest, AStalledSinkNeitherBlocksTheBuildNorLosesStructuralEvents) {
  RecordingSink fast;
  BlockedSink blocked;
  SessionOptions options;
  options.delivery.sink_capacity = 16;
  options.delivery.step_period = std::chrono::milliseconds(1);
  BuildSession session(SteadyClock::Instance(), {&fast, &blocked}, options);
  std::thread releaser;
  const BuildResult result = session.Run(BuildInfo{}, [&](Monitor& m) {
    for (int i = 0; i < 100; ++i) {
      const std::string name = "p" + std::to_string(i);
      m.phaseStart(name.c_str(), nullptr, 50);
      for (int s = 0; s < 50; ++s) {
        m.stepComplete(name.c_str(), s);
        // A pause now and then lets the dispatcher keep up for the fast sink. 1 ms, not
        // less: Windows sleeps in whole milliseconds and rounds shorter pauses to none.
        if (s % 25 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      m.Log(Severity::kInfo, "log line");
      m.phaseFinish(name.c_str());
    }
    // The build got here while the blocked sink had not taken a single event.
    EXPECT_TRUE(blocked.events().empty());
    releaser = std::thread([&] { blocked.Release(); });
    return BuildOutcome{true, ""};
  });
  releaser.join();
  EXPECT_EQ(result.status, BuildStatus::kSucceeded);

  const auto slow_events = blocked.events();
  ExpectWellFormedStream(slow_events);
  ExpectWellFormedStream(fast.events());
  int starts = 0, finishes = 0;
  for (const Event& e : slow_events) {
    starts += e.type == EventType::kPhaseStart;
    finishes += e.type == EventType::kPhaseFinish;
  }
  EXPECT_EQ(starts, 100);
  EXPECT_EQ(finishes, 100);
  const uint64_t fast_dropped = fast.events().back().dropped;
  EXPECT_GT(slow_events.back().dropped, 0u);  // logs and steps were dropped ...
  EXPECT_LT(fast_dropped, slow_events.back().dropped);  // ... mostly for the slow sink
  EXPECT_EQ(result.events_dropped, slow_events.back().dropped + fast_dropped);
  EXPECT_TRUE(blocked.closed());
}

TEST(DeliveryTest, QueuedStepsOfAPhaseCoalesceToTheLatest) {
  RecordingSink sink;
  {
    SinkChannel channel(&sink, 1024);
    Event start;
    start.type = EventType::kPhaseStart;
    start.id = 7;
    start.total = 100;
    start.seq = 1;
    // Hold the sink thread busy is not needed: pushes are much faster than delivery
    // of the first event is guaranteed to be, so assert only on what must hold.
    channel.Push(start);
    for (int s = 0; s < 100; ++s) {
      Event step;
      step.type = EventType::kStep;
      step.id = 7;
      step.step = s;
      step.total = 100;
      step.seq = 2 + s;
      channel.Push(step);
    }
    channel.Close();
    EXPECT_EQ(channel.dropped(), 0u);
  }
  const auto events = sink.events();
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.back().step, 99);  // the latest value always arrives
  for (size_t i = 1; i < events.size(); ++i) EXPECT_GT(events[i].seq, events[i - 1].seq);
}

}  // namespace
}  // namespace trtwatch
