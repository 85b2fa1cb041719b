// Stress: 16 threads drive random trees into one monitor while a random moment brings
// a cancel. The stream must stay well formed and the counts consistent.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "core/build_session.h"
#include "core/clock.h"
#include "support/recording_sink.h"
#include "support/stream_checks.h"

namespace trtwatch {
namespace {

using testing::ExpectWellFormedStream;
using testing::RecordingSink;

// Runs a random subtree under `parent`, TensorRT style; returns false once refused.
bool RandomPhase(Monitor& m, std::mt19937& rng, const std::string& name, const char* parent, int depth,
                 std::atomic<int64_t>& started) {
  const int steps = 1 + static_cast<int>(rng() % 6);
  m.phaseStart(name.c_str(), parent, steps);
  started.fetch_add(1);
  bool ok = true;
  for (int s = 0; s < steps && ok; ++s) {
    if (depth < 7 && rng() % 3 == 0) {
      ok = RandomPhase(m, rng, name + "/" + std::to_string(s), name.c_str(), depth + 1, started);
    }
    if (ok) ok = m.stepComplete(name.c_str(), s);
    if (rng() % 50 == 0) std::this_thread::yield();
  }
  m.phaseFinish(name.c_str());
  return ok;
}

TEST(StressTest, SixteenThreadsRandomTreesRandomCancel) {
  constexpr int kThreads = 16;
  for (int round = 0; round < 6; ++round) {
    RecordingSink sink;
    RecordingSink slow(std::chrono::microseconds(50));
    BuildSession session(SteadyClock::Instance(), {&sink, &slow}, SessionOptions{});
    std::atomic<int64_t> started{0};
    std::mt19937 seeder(1234 + round);
    const int cancel_after_us = static_cast<int>(seeder() % 20000);
    const bool cancel = round % 3 != 2;  // some rounds run to completion
    const BuildResult result = session.Run(BuildInfo{}, [&](Monitor& m) {
      std::thread canceller([&] {
        if (!cancel) return;
        std::this_thread::sleep_for(std::chrono::microseconds(cancel_after_us));
        m.RequestCancel(CancelReason::kApi, "stress");
      });
      std::vector<std::thread> threads;
      std::atomic<bool> refused{false};
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t, seed = seeder()] {
          std::mt19937 rng(seed);
          for (int tree = 0; tree < 40 && !refused.load(); ++tree) {
            const std::string name = "t" + std::to_string(t) + "#" + std::to_string(tree);
            if (!RandomPhase(m, rng, name, nullptr, 0, started)) refused.store(true);
          }
        });
      }
      for (auto& th : threads) th.join();
      canceller.join();
      return BuildOutcome{!refused.load(), ""};
    });
    for (RecordingSink* s : {&sink, &slow}) {
      const auto events = s->events();
      ExpectWellFormedStream(events);
      int64_t starts = 0, finishes = 0;
      for (const Event& e : events) {
        starts += e.type == EventType::kPhaseStart;
        finishes += e.type == EventType::kPhaseFinish;
      }
      EXPECT_EQ(starts, started.load());
      EXPECT_EQ(finishes, started.load());
      int64_t summed = 0;
      for (const PhaseSummary& p : events.back().phases) summed += p.count;
      EXPECT_EQ(summed, started.load());
    }
    EXPECT_EQ(result.anomalies.Total(), 0);
    if (result.status == BuildStatus::kCancelled) {
      ASSERT_TRUE(result.cancel_latency.has_value());
      EXPECT_GE(result.cancel_latency->to_return, 0);
    } else {
      EXPECT_EQ(result.status, BuildStatus::kSucceeded);
    }
  }
}

}  // namespace
}  // namespace trtwatch
