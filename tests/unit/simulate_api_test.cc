// The public Simulate entry point (include/trtwatch/simulate.h): a simulated build
// through a Watch takes the watch's path — its sinks, its cancel, its result.
#include <trtwatch/simulate.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <unistd.h>
#include <stdexcept>
#include <thread>

#include "support/recording_sink.h"
#include "support/stream_checks.h"

namespace trtwatch {
namespace {

using testing::RecordingSink;

WatchOptions QuietWith(std::shared_ptr<Sink> sink) {
  WatchOptions options;
  options.progress = Progress::kQuiet;
  options.sinks.push_back(std::move(sink));
  return options;
}

TEST(SimulateApiTest, ABuiltinProfileRunsThroughTheWatchAndSaysItIsSimulated) {
  auto sink = std::make_shared<RecordingSink>();
  Watch watch(QuietWith(sink));
  const BuildResult result = Simulate(watch, {.profile = "small-cnn", .seed = 3, .speed = 200});

  EXPECT_EQ(result.status, BuildStatus::kSucceeded);
  const std::vector<Event> events = sink->events();
  testing::ExpectWellFormedStream(events);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().backend, "simulated");
  EXPECT_EQ(events.front().model, "simulated:small-cnn");
  EXPECT_EQ(events.front().build, watch.build_id());
  EXPECT_GT(std::count_if(events.begin(), events.end(), [](const Event& e) { return e.type == EventType::kPhaseStart; }), 1);
}

TEST(SimulateApiTest, ACancelFromAnotherThreadEndsItCancelled) {
  auto sink = std::make_shared<RecordingSink>();
  Watch watch(QuietWith(sink));
  std::thread stopper([&] {
    while (sink->events().size() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    watch.Cancel("budget spent", CancelReason::kBudget);
  });
  const BuildResult result = Simulate(watch, {.profile = "large-transformer", .speed = 1});
  stopper.join();

  EXPECT_EQ(result.status, BuildStatus::kCancelled);
  EXPECT_EQ(result.cancel_reason, CancelReason::kBudget);
  EXPECT_EQ(result.error, "budget spent");
  EXPECT_EQ(result.exit_code, exit_code::kTimedOut);
}

TEST(SimulateApiTest, TheFourthBuildOfAProfileGetsAnEstimateFromTheThreeBefore) {
  char folder[] = "/tmp/trtwatch-history-XXXXXX";
  ASSERT_NE(::mkdtemp(folder), nullptr);
  std::vector<std::optional<Estimate>> estimates;
  std::vector<Event> fourth_events;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    auto sink = std::make_shared<RecordingSink>();
    WatchOptions options = QuietWith(sink);
    options.history = folder;
    Watch watch(std::move(options));
    const BuildResult result = Simulate(watch, {.profile = "small-cnn", .seed = seed, .speed = 50});
    ASSERT_TRUE(result.succeeded()) << result.error;
    estimates.push_back(result.estimate);
    fourth_events = sink->events();
  }
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(estimates[i]);
    EXPECT_FALSE(estimates[i]->remaining) << "build " << i + 1 << " has too little history";
    EXPECT_EQ(estimates[i]->builds, static_cast<int64_t>(i));
  }
  ASSERT_TRUE(estimates[3] && estimates[3]->remaining);
  EXPECT_EQ(estimates[3]->builds, 3);
  EXPECT_LE(estimates[3]->remaining->p10, estimates[3]->remaining->p90);
  const bool streamed = std::any_of(fourth_events.begin(), fourth_events.end(), [](const Event& e) {
    return e.type == EventType::kEstimate && e.estimate.remaining.has_value();
  });
  EXPECT_TRUE(streamed) << "the sinks see the estimate events";
  std::filesystem::remove_all(folder);
}

TEST(SimulateApiTest, TheFailingProfileEndsFailedWithItsMessage) {
  Watch watch(QuietWith(std::make_shared<RecordingSink>()));
  const BuildResult result = Simulate(watch, {.profile = "failing", .speed = 200});
  EXPECT_EQ(result.status, BuildStatus::kFailed);
  EXPECT_FALSE(result.error.empty());
}

TEST(SimulateApiTest, BadInputThrowsBeforeTheBuildStartsAndAWatchRunsOnce) {
  auto sink = std::make_shared<RecordingSink>();
  Watch watch(QuietWith(sink));
  try {
    Simulate(watch, {.profile = "no-such-profile"});
    FAIL() << "an unknown profile must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("small-cnn"), std::string::npos) << "lists the built-in profiles: " << e.what();
  }
  EXPECT_THROW(Simulate(watch, {.speed = 0}), std::invalid_argument);
  EXPECT_TRUE(sink->events().empty()) << "nothing started";
  EXPECT_EQ(Simulate(watch, {.speed = 500}).status, BuildStatus::kSucceeded);
  EXPECT_THROW(Simulate(watch, {.speed = 500}), std::logic_error);
  const std::vector<std::string> names = SimulationProfiles();
  EXPECT_NE(std::find(names.begin(), names.end(), "large-transformer"), names.end());
}

}  // namespace
}  // namespace trtwatch
