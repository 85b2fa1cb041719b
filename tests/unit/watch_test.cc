// The public Watch API (include/trtwatch/watch.h), driven the way a user's own build
// code drives it: TensorRT-shaped callbacks from several threads inside Run().
#include <trtwatch/watch.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/recording_sink.h"
#include "support/stream_checks.h"
#include "support/temp_dir_test.h"

namespace trtwatch {
namespace {

using std::chrono::milliseconds;
using testing::RecordingSink;

// A builder in the shape of TensorRT's: a root phase whose steps each run `workers`
// threads with a child phase of `steps` steps; a false from stepComplete stops every
// thread at its next step and the build returns no engine.
bool FakeBuild(Watch& watch, int workers, int root_steps, int steps, milliseconds step_time = milliseconds(0)) {
  std::atomic<bool> stop{false};
  watch.phaseStart("Building engine", nullptr, root_steps);
  for (int s = 0; s < root_steps && !stop; ++s) {
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        const std::string name = "Timing tactics " + std::to_string(w);
        watch.phaseStart(name.c_str(), "Building engine", steps);
        for (int k = 0; k < steps && !stop; ++k) {
          std::this_thread::sleep_for(step_time);
          if (!watch.stepComplete(name.c_str(), k)) stop = true;
        }
        watch.phaseFinish(name.c_str());
      });
    }
    for (std::thread& t : threads) t.join();
    if (!stop && !watch.stepComplete("Building engine", s)) stop = true;
  }
  watch.phaseFinish("Building engine");
  return !stop;
}

WatchOptions Quiet(std::shared_ptr<Sink> sink = nullptr) {
  WatchOptions options;
  options.progress = Progress::kQuiet;
  options.model = "model.onnx";
  if (sink) options.sinks.push_back(std::move(sink));
  return options;
}

TEST(WatchTest, RunDeliversEveryThreadsProgressToAUserSink) {
  auto sink = std::make_shared<RecordingSink>();
  Watch watch(Quiet(sink));
  const BuildResult result = watch.Run([&] { return FakeBuild(watch, 4, 3, 20); });

  EXPECT_EQ(result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(result.exit_code, exit_code::kSucceeded);
  EXPECT_FALSE(result.cancel_reason.has_value());
  const std::vector<Event> events = sink->events();
  testing::ExpectWellFormedStream(events);
  EXPECT_TRUE(sink->closed());
  EXPECT_EQ(events.front().model, "model.onnx");
  EXPECT_EQ(events.front().backend, "tensorrt");
  EXPECT_EQ(events.front().build, watch.build_id());
  int starts = 0;
  for (const Event& e : events) starts += e.type == EventType::kPhaseStart;
  EXPECT_EQ(starts, 1 + 3 * 4);
  ASSERT_FALSE(result.phases.empty());
}

TEST(WatchTest, TimeoutEndsTimedOutWithTheExitCodeOfTimeout) {
  WatchOptions options = Quiet();
  options.timeout = milliseconds(200);
  Watch watch(options);
  const BuildResult result = watch.Run([&] { return FakeBuild(watch, 2, 1000, 50, milliseconds(2)); });

  EXPECT_EQ(result.status, BuildStatus::kTimedOut);
  EXPECT_EQ(result.exit_code, exit_code::kTimedOut);
  ASSERT_TRUE(result.cancel_reason.has_value());
  EXPECT_EQ(*result.cancel_reason, CancelReason::kTimeout);
  EXPECT_NE(result.error.find("timeout 200ms"), std::string::npos) << result.error;
  ASSERT_TRUE(result.cancel_latency.has_value());
  EXPECT_TRUE(result.cancel_latency->to_first_false.has_value());
}

TEST(WatchTest, CancelFromAnotherThreadStopsTheBuildAtItsNextStep) {
  auto sink = std::make_shared<RecordingSink>();
  Watch watch(Quiet(sink));
  std::atomic<int> steps_after_cancel{0};
  std::thread stopper;
  const BuildResult result = watch.Run([&] {
    watch.phaseStart("Building engine", nullptr, 1000000);
    stopper = std::thread([&] { watch.Cancel("Stop pressed", CancelReason::kUser); });
    int32_t step = 0;
    while (watch.stepComplete("Building engine", step++)) std::this_thread::sleep_for(milliseconds(1));
    // TensorRT stops at the first false: nothing more is reported.
    steps_after_cancel = watch.cancel_requested() ? 0 : 1;
    watch.phaseFinish("Building engine");
    return false;
  });
  stopper.join();

  EXPECT_EQ(result.status, BuildStatus::kCancelled);
  EXPECT_EQ(result.exit_code, exit_code::kInterrupted);
  EXPECT_EQ(result.error, "Stop pressed");
  EXPECT_EQ(steps_after_cancel, 0);
  bool saw_cancel_event = false;
  for (const Event& e : sink->events()) {
    if (e.type == EventType::kCancelRequested) {
      saw_cancel_event = true;
      EXPECT_EQ(e.reason, CancelReason::kUser);
      EXPECT_EQ(e.message, "Stop pressed");
    }
  }
  EXPECT_TRUE(saw_cancel_event);
  EXPECT_FALSE(watch.Cancel("again")) << "a cancel is requested once";
}

TEST(WatchTest, AFailedBuildCarriesTheLatestErrorLines) {
  Watch watch(Quiet());
  const BuildResult result = watch.Run([&] {
    watch.Log(Severity::kInfo, "parsing");
    watch.Log(Severity::kError, "out of device memory while timing tactics");
    return false;
  });
  EXPECT_EQ(result.status, BuildStatus::kFailed);
  EXPECT_EQ(result.exit_code, exit_code::kFailed);
  EXPECT_EQ(result.error, "out of device memory while timing tactics");
}

TEST(WatchTest, AnExceptionFromTheBuildEndsItFailedWithItsMessage) {
  Watch watch(Quiet());
  const BuildResult result = watch.Run([]() -> bool { throw std::runtime_error("parser: unsupported node"); });
  EXPECT_EQ(result.status, BuildStatus::kFailed);
  EXPECT_EQ(result.error, "parser: unsupported node");
}

class WatchFilesTest : public testing::TempDirTest {};

TEST_F(WatchFilesTest, EventsFileHoldsTheStreamAsJsonLines) {
  WatchOptions options = Quiet();
  options.events_file = dir_ + "/events.jsonl";
  {
    Watch watch(options);
    ASSERT_EQ(watch.Run([&] { return FakeBuild(watch, 2, 2, 5); }).status, BuildStatus::kSucceeded);
  }
  std::ifstream in(options.events_file);
  std::string line;
  std::vector<Event> events;
  while (std::getline(in, line)) {
    Event e;
    std::string error;
    ASSERT_TRUE(EventFromJson(line, &e, &error)) << error << ": " << line;
    EXPECT_EQ(EventToJson(e), line);
    events.push_back(e);
  }
  testing::ExpectWellFormedStream(events);
}

TEST_F(WatchFilesTest, BadOptionsThrowAMessageNamingTheProblem) {
  WatchOptions bad_file = Quiet();
  bad_file.events_file = dir_ + "/no-such-folder/events.jsonl";
  try {
    Watch watch(bad_file);
    FAIL() << "an unwritable events file must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-folder"), std::string::npos) << e.what();
  }

  WatchOptions zero = Quiet();
  zero.timeout = milliseconds(0);
  EXPECT_THROW(Watch{zero}, std::invalid_argument);

  WatchOptions stall_cancel = Quiet();
  stall_cancel.stall_action = StallAction::kCancel;
  try {
    Watch watch(stall_cancel);
    FAIL() << "a stall action without a stall timeout must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("stall-timeout"), std::string::npos) << e.what();
  }

  WatchOptions null_sink = Quiet();
  null_sink.sinks.push_back(nullptr);
  EXPECT_THROW(Watch{null_sink}, std::invalid_argument);
}

TEST(WatchTest, ADestroyedWatchConcludesTheBuildItStarted) {
  auto sink = std::make_shared<RecordingSink>();
  {
    Watch watch(Quiet(sink));
    watch.Start();
    watch.phaseStart("Building engine", nullptr, 4);
    // The caller's code unwinds (an exception, say) without calling Finish.
  }
  const std::vector<Event> events = sink->events();
  testing::ExpectWellFormedStream(events);
  EXPECT_EQ(events.back().status, BuildStatus::kFailed);
  EXPECT_TRUE(sink->closed());
}

TEST(WatchTest, OneBuildPerWatchAndOneSignalHandlerPerProcess) {
  Watch watch(Quiet());
  EXPECT_THROW(watch.Finish(true), std::logic_error);
  watch.Start();
  EXPECT_THROW(watch.Start(), std::logic_error);
  EXPECT_THROW(watch.AddFact("late", "fact"), std::logic_error);
  EXPECT_EQ(watch.Finish(true).status, BuildStatus::kSucceeded);
  EXPECT_THROW(watch.Finish(true), std::logic_error);

  WatchOptions with_signals = Quiet();
  with_signals.handle_signals = true;
  Watch first(with_signals);
  try {
    Watch second(with_signals);
    FAIL() << "two watches cannot both own Ctrl+C";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("signal"), std::string::npos) << e.what();
  }
  // A finished build gives signals back while its watch still lives.
  first.Start();
  first.Finish(true);
  Watch next(with_signals);
  next.Start();
  EXPECT_EQ(next.Finish(true).status, BuildStatus::kSucceeded);
}

}  // namespace
}  // namespace trtwatch
