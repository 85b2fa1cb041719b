// A sink that throws is contained: counted, reported to the other sinks, detached.
// The build finishes and its result is unaffected (defect 8 of issue 14).
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "core/build_session.h"
#include "core/clock.h"
#include "support/fake_clock.h"
#include "support/recording_sink.h"
#include "support/stream_checks.h"

namespace trtwatch {
namespace {

using testing::ExpectWellFormedStream;
using testing::RecordingSink;

class ThrowingSink final : public Sink {
 public:
  ThrowingSink(int throw_at, bool throw_on_close) : throw_at_(throw_at), throw_on_close_(throw_on_close) {}
  void OnEvent(const Event&) override {
    if (++seen_ == throw_at_) throw std::runtime_error("disk on fire");
    if (seen_ > throw_at_) ++after_failure_;
  }
  void Close() override {
    if (throw_on_close_) throw 42;  // not even a std::exception
  }
  int seen() const { return seen_; }
  int after_failure() const { return after_failure_; }

 private:
  const int throw_at_;
  const bool throw_on_close_;
  int seen_ = 0;
  int after_failure_ = 0;
};

// Whether `events` carry the report that another sink failed, and why.
bool HasFailureReport(const std::vector<Event>& events) {
  for (const Event& e : events) {
    if (e.type == EventType::kLog && e.severity == Severity::kError &&
        e.message.find("disk on fire") != std::string::npos) {
      return true;
    }
  }
  return false;
}

// Waits (bounded, 5 s) until the dispatcher has reported the failure to `good`. It can
// only once the failed sink's channel has detached it, which that channel's thread does
// after the throw: the build must not end before then.
bool WaitForFailureReport(const RecordingSink& good) {
  for (int i = 0; i < 5000 && !HasFailureReport(good.events()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return HasFailureReport(good.events());
}

TEST(SinkFailureTest, AThrowingSinkIsDetachedAndReportedNotFatal) {
  FakeClock clock;
  RecordingSink good;
  ThrowingSink bad(/*throw_at=*/3, /*throw_on_close=*/true);
  BuildSession session(clock, {&bad, &good}, SessionOptions{});
  const BuildResult result = session.Run(BuildInfo{"b", "simulated", "m", {}, {}}, [&](Monitor& m) {
    for (int i = 0; i < 20; ++i) {
      if (i == 2) {
        EXPECT_TRUE(WaitForFailureReport(good));  // it threw at its third event
      }
      const std::string name = "phase " + std::to_string(i);
      m.phaseStart(name.c_str(), nullptr, 2);
      m.stepComplete(name.c_str(), 0);
      m.stepComplete(name.c_str(), 1);
      m.phaseFinish(name.c_str());
    }
    return BuildOutcome{true, ""};
  });
  EXPECT_EQ(result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(bad.seen(), 3);  // detached at its failure: never called again
  EXPECT_EQ(bad.after_failure(), 0);
  EXPECT_GT(result.events_dropped, 0u);  // what the failed sink did not get is counted
  const auto events = good.events();
  ExpectWellFormedStream(events);
  EXPECT_TRUE(HasFailureReport(events)) << "the other sinks learn that a sink failed, and why";
  EXPECT_TRUE(good.closed());
}

TEST(SinkFailureTest, ASinkThrowingOnEveryEventNeverStallsTheBuild) {
  FakeClock clock;
  ThrowingSink bad(/*throw_at=*/1, /*throw_on_close=*/false);
  BuildSession session(clock, {&bad}, SessionOptions{});
  const BuildResult result = session.Run(BuildInfo{}, [](Monitor& m) {
    m.phaseStart("p", nullptr, 1);
    m.phaseFinish("p");
    return BuildOutcome{true, ""};
  });
  EXPECT_EQ(result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(bad.seen(), 1);
}

}  // namespace
}  // namespace trtwatch
