#include "core/cancellation.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace trtwatch {
namespace {

TEST(CancellationTest, ExactlyOneOfManyRacingRequestsWins) {
  CancellationSource source;
  std::atomic<int> winners{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      if (source.Request(CancelReason::kApi, "from " + std::to_string(i), 100 + i)) ++winners;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(winners.load(), 1);
  ASSERT_TRUE(source.IsRequested());
  // The kept details are the winner's, consistently.
  const int who = std::stoi(source.message().substr(5));
  EXPECT_EQ(source.requested_at_ns(), 100 + who);
  EXPECT_EQ(source.reason(), CancelReason::kApi);
}

TEST(CancellationTest, ReasonNamesRoundTrip) {
  for (CancelReason r : {CancelReason::kUser, CancelReason::kSignal, CancelReason::kTimeout, CancelReason::kStall,
                         CancelReason::kApi, CancelReason::kBudget}) {
    CancelReason parsed;
    ASSERT_TRUE(ParseCancelReason(CancelReasonName(r), &parsed));
    EXPECT_EQ(parsed, r);
  }
  CancelReason unused;
  EXPECT_FALSE(ParseCancelReason("bored", &unused));
}

}  // namespace
}  // namespace trtwatch
