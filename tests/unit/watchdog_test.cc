// Watchdog on simulated time: the clock is a FakeClock moved by the test.
#include "core/watchdog.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/clock.h"
#include "support/fake_clock.h"

namespace trtwatch {
namespace {

bool WaitUntil(const std::function<bool()>& condition) {
  for (int i = 0; i < 400 && !condition(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return condition();
}

TEST(WatchdogTest, TimeoutRequestsCancelWithReasonTimeoutAtTheDeadline) {
  FakeClock clock;
  Monitor monitor(clock);
  WatchdogOptions options;
  options.timeout = 10;
  options.timeout_text = "--timeout 10s";
  options.poll = std::chrono::milliseconds(1);
  Watchdog watchdog(monitor, options);
  clock.AdvanceSeconds(9.9);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(monitor.IsCancelRequested());
  clock.AdvanceSeconds(0.2);
  ASSERT_TRUE(WaitUntil([&] { return monitor.IsCancelRequested(); }));
  EXPECT_EQ(monitor.cancellation().reason(), CancelReason::kTimeout);
  EXPECT_NE(monitor.cancellation().message().find("--timeout 10s"), std::string::npos);
}

TEST(WatchdogTest, StallIsReportedOncePerIntervalOfSilenceAndCanCancel) {
  FakeClock clock;
  Monitor monitor(clock);
  WatchdogOptions options;
  options.stall_after = 30;
  options.cancel_on_stall = true;
  options.poll = std::chrono::milliseconds(1);
  Watchdog watchdog(monitor, options);
  monitor.phaseStart("Building engine", nullptr, 2);
  clock.AdvanceSeconds(29);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(monitor.IsCancelRequested());
  clock.AdvanceSeconds(2);
  ASSERT_TRUE(WaitUntil([&] { return monitor.IsCancelRequested(); }));
  EXPECT_EQ(monitor.cancellation().reason(), CancelReason::kStall);
  watchdog.Stop();
  std::vector<Event> pending;
  monitor.TakePending(&pending);
  int stalls = 0;
  for (const Event& e : pending) {
    if (e.type == EventType::kStall) {
      ++stalls;
      EXPECT_GE(e.silent_for, 30);
    }
  }
  EXPECT_EQ(stalls, 1);
}

TEST(WatchdogTest, ProgressResetsTheStallWatch) {
  FakeClock clock;
  Monitor monitor(clock);
  WatchdogOptions options;
  options.stall_after = 30;
  options.poll = std::chrono::milliseconds(1);
  Watchdog watchdog(monitor, options);
  monitor.phaseStart("p", nullptr, 100);
  for (int i = 0; i < 5; ++i) {
    clock.AdvanceSeconds(20);
    monitor.stepComplete("p", i);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  watchdog.Stop();
  std::vector<Event> pending;
  monitor.TakePending(&pending);
  for (const Event& e : pending) EXPECT_NE(e.type, EventType::kStall);
}

}  // namespace
}  // namespace trtwatch
