// Stress: many threads drive random trees into one monitor while a random moment brings
// a cancel. The stream must stay well formed, the counts consistent and the cancel
// latencies ordered. A short variant runs in CI; a long one (64 threads) on demand.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
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

// One build: `threads` threads drive random trees (up to `trees` each) while, in
// cancelling rounds, a random moment brings a cancel. Checks the stream of a fast and
// of a slow sink and the result's counts.
void StressRound(int threads, int trees, uint32_t seed, bool cancel) {
  RecordingSink sink;
  RecordingSink slow(std::chrono::microseconds(50));
  BuildSession session(SteadyClock::Instance(), {&sink, &slow}, SessionOptions{});
  std::atomic<int64_t> started{0};
  std::mt19937 seeder(seed);
  const int cancel_after_us = static_cast<int>(seeder() % 20000);
  const BuildResult result = session.Run(BuildInfo{}, [&](Monitor& m) {
    std::thread canceller([&] {
      if (!cancel) return;
      std::this_thread::sleep_for(std::chrono::microseconds(cancel_after_us));
      m.RequestCancel(CancelReason::kApi, "stress");
    });
    std::vector<std::thread> workers;
    std::atomic<bool> refused{false};
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t, thread_seed = seeder()] {
        std::mt19937 rng(thread_seed);
        for (int tree = 0; tree < trees && !refused.load(); ++tree) {
          const std::string name = "t" + std::to_string(t) + "#" + std::to_string(tree);
          if (!RandomPhase(m, rng, name, nullptr, 0, started)) refused.store(true);
        }
      });
    }
    for (auto& th : workers) th.join();
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
    if (result.cancel_latency->to_first_false) {
      EXPECT_GE(*result.cancel_latency->to_first_false, 0);
      EXPECT_LE(*result.cancel_latency->to_first_false, result.cancel_latency->to_return);
    }
  } else {
    EXPECT_EQ(result.status, BuildStatus::kSucceeded);
  }
}

// The CI variant: a few seconds.
TEST(StressTest, SixteenThreadsRandomTreesRandomCancel) {
  for (int round = 0; round < 6; ++round) {
    StressRound(/*threads=*/16, /*trees=*/40, 1234 + round, /*cancel=*/round % 3 != 2);  // some run to the end
  }
}

// The long variant, on demand (docs/architecture.md):
//   TRTWATCH_STRESS_SECONDS=300 build/tests/trtwatch_core_tests --gtest_filter='StressTest.Long*'
// 64 threads, random trees, random cancel, round after round until the time is up.
TEST(StressTest, LongSixtyFourThreadsUntilTimeIsUp) {
  const char* seconds = std::getenv("TRTWATCH_STRESS_SECONDS");
  if (seconds == nullptr) GTEST_SKIP() << "set TRTWATCH_STRESS_SECONDS to run the long stress test";
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(seconds));
  std::random_device entropy;
  int rounds = 0;
  while (std::chrono::steady_clock::now() < until && !HasFailure()) {
    const uint32_t seed = entropy();
    SCOPED_TRACE("seed " + std::to_string(seed));
    StressRound(/*threads=*/64, /*trees=*/20 + static_cast<int>(seed % 60), seed, /*cancel=*/seed % 4 != 0);
    ++rounds;
  }
  std::printf("long stress: %d rounds of 64 threads\n", rounds);
}

}  // namespace
}  // namespace trtwatch
