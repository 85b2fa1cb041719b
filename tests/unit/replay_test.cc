// trtwatch replay: a recorded stream read, checked and played back as the original was.
#include "backends/replay/replay_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <thread>

#include "backends/simulated/simulator.h"
#include "core/build_session.h"
#include "core/clock.h"
#include "history/build_recorder.h"
#include "support/recording_sink.h"
#include "support/stream_checks.h"

namespace trtwatch::replay {
namespace {

using trtwatch::testing::ExpectWellFormedStream;
using trtwatch::testing::RecordingSink;

struct Played {
  BuildResult result;
  std::vector<Event> events;
};

Played RunBackend(Backend& backend, const std::function<void(Monitor&)>& during = nullptr) {
  RecordingSink sink;
  BuildSession session(SteadyClock::Instance(), {&sink}, SessionOptions{});
  std::thread side;
  Played played;
  played.result = session.Run(backend.Describe(), [&](Monitor& m) {
    // Started here, after build_start: a cancel before it would begin the stream.
    if (during) side = std::thread([&] { during(m); });
    return backend.Build(m);
  });
  if (side.joinable()) side.join();
  played.events = sink.events();
  return played;
}

Played Simulated(const std::string& profile_name, const std::function<void(Monitor&)>& during = nullptr) {
  std::string error;
  std::optional<sim::Profile> profile = sim::LoadProfile(profile_name, &error);
  EXPECT_TRUE(profile.has_value()) << error;
  sim::SimulatedBackend backend(profile.value_or(sim::Profile{}), sim::SimulationOptions{7, 200.0});
  return RunBackend(backend, during);
}

std::string AsJsonLines(const std::vector<Event>& events) {
  std::string text;
  for (const Event& e : events) text += EventToJson(e) + "\n";
  return text;
}

RecordedStream Parsed(const std::string& text) {
  RecordedStreamRead read = ParseRecordedStream(text, "build.jsonl");
  EXPECT_TRUE(read.stream.has_value()) << read.error;
  return read.stream.value_or(RecordedStream{});
}

Played Replayed(const std::vector<Event>& original, ReplayOptions options = {0, true},
                const std::function<void(Monitor&)>& during = nullptr) {
  ReplayBackend backend(Parsed(AsJsonLines(original)), options);
  return RunBackend(backend, during);
}

// What a view shows of a build: its phases under their parents, in order, and how each
// ended; step updates may coalesce differently on the way to a sink.
std::vector<std::string> Shape(const std::vector<Event>& events) {
  std::map<int64_t, std::string> names;
  std::vector<std::string> shape;
  for (const Event& e : events) {
    if (e.type == EventType::kPhaseStart) {
      names[e.id] = e.phase;
      shape.push_back("start " + e.phase + " in " + (e.parent ? names[e.parent] : "-") + " /" +
                      std::to_string(e.total));
    } else if (e.type == EventType::kPhaseFinish) {
      shape.push_back("finish " + e.phase + " " + std::to_string(e.completed) + (e.early ? " early" : ""));
    } else if (e.type == EventType::kLog || e.type == EventType::kCancelRequested) {
      shape.push_back(std::string(EventTypeName(e.type)) + " " + e.message);
    }
  }
  return shape;
}

// How many instances of each phase the result counts (its order is by time spent).
std::map<std::string, int64_t> PhaseCounts(const BuildResult& result) {
  std::map<std::string, int64_t> counts;
  for (const PhaseSummary& p : result.phases) counts[p.phase] = p.count;
  return counts;
}

std::string RefusalOf(const std::string& text) {
  RecordedStreamRead read = ParseRecordedStream(text, "build.jsonl");
  EXPECT_FALSE(read.stream.has_value());
  return read.error;
}

TEST(ReplayTest, ReplaysTheOriginalPhasesLogsAndOutcome) {
  const Played original = Simulated("small-cnn");
  const Played replayed = Replayed(original.events);
  ExpectWellFormedStream(replayed.events);
  EXPECT_EQ(Shape(replayed.events), Shape(original.events));
  EXPECT_EQ(replayed.result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(PhaseCounts(replayed.result), PhaseCounts(original.result));
}

TEST(ReplayTest, BuildStartNamesTheReplayAndTheOriginal) {
  Played original = Simulated("small-cnn");
  original.events.front().build = "b_0123456789abcdef0123456789abcdef";  // as the runner draws one
  const Played replayed = Replayed(original.events);
  const Event& start = replayed.events.front();
  EXPECT_EQ(start.backend, "replay");
  EXPECT_EQ(start.model, original.events.front().model);
  const Facts& facts = start.facts;
  using Fact = std::pair<std::string, std::string>;
  EXPECT_NE(std::find(facts.begin(), facts.end(), Fact{"replay_of", "b_0123456789abcdef0123456789abcdef"}),
            facts.end());
  EXPECT_NE(std::find(facts.begin(), facts.end(), Fact{"replay_of_backend", "simulated"}), facts.end());
}

TEST(ReplayTest, AFailedBuildReplaysFailedWithItsError) {
  const Played original = Simulated("failing");
  ASSERT_EQ(original.result.status, BuildStatus::kFailed);
  const Played replayed = Replayed(original.events);
  EXPECT_EQ(replayed.result.status, BuildStatus::kFailed);
  EXPECT_EQ(replayed.result.error, original.result.error);
  EXPECT_EQ(Shape(replayed.events), Shape(original.events));
}

TEST(ReplayTest, ACancelledBuildReplaysItsCancelAndReason) {
  const Played original = Simulated("small-cnn", [](Monitor& m) {
    while (m.SecondsSinceStart() < 0.02) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    m.RequestCancel(CancelReason::kTimeout, "the build ran past its timeout");
  });
  ASSERT_EQ(original.result.status, BuildStatus::kTimedOut);
  const Played replayed = Replayed(original.events);
  EXPECT_EQ(replayed.result.status, BuildStatus::kTimedOut);
  EXPECT_EQ(replayed.result.cancel_reason, CancelReason::kTimeout);
  EXPECT_EQ(Shape(replayed.events), Shape(original.events));
}

TEST(ReplayTest, ACancelOfTheReplayStopsItInASilentStretch) {
  Played original = Simulated("small-cnn");
  original.events.back().t += 3600;  // an hour without a callback before the end
  const Played replayed = Replayed(original.events, ReplayOptions{1.0, false}, [](Monitor& m) {
    while (m.SecondsSinceStart() < 0.2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    m.RequestCancel(CancelReason::kSignal, "Ctrl+C");
  });
  EXPECT_EQ(replayed.result.status, BuildStatus::kCancelled);
  EXPECT_EQ(replayed.result.cancel_reason, CancelReason::kSignal);
}

TEST(ReplayTest, PlaysAtTheRecordedPaceScaledBySpeed) {
  Played original = Simulated("small-cnn");
  original.events.back().t = original.events[original.events.size() - 2].t + 0.4;
  const Played replayed = Replayed(original.events, ReplayOptions{2.0, false});
  // 0.4 s of recorded silence at twice the speed: the replay cannot end before 0.2 s.
  EXPECT_GE(replayed.events.back().elapsed, 0.2);
}

TEST(ReplayTest, ReadsServerSentEventsSavedFromTheService) {
  const Played original = Simulated("small-cnn");
  std::string sse = ": connected\n\n";
  for (const Event& e : original.events) {
    sse += "id: " + std::to_string(e.seq) + "\r\nevent: " + std::string(EventTypeName(e.type)) + "\r\ndata: " +
           EventToJson(e) + "\r\n\r\n";
  }
  EXPECT_EQ(Parsed(sse).events.size(), original.events.size());
}

TEST(ReplayTest, RefusesWhatIsNotOneWholeBuild) {
  const std::vector<Event> events = Simulated("small-cnn").events;
  const std::string whole = AsJsonLines(events);
  EXPECT_NE(RefusalOf("").find("holds no event"), std::string::npos);
  EXPECT_NE(RefusalOf("hello\n").find("line 1: not an event"), std::string::npos);
  EXPECT_NE(RefusalOf(whole.substr(0, whole.rfind('\n', whole.size() - 2) + 1)).find("truncated"),
            std::string::npos);
  EXPECT_NE(RefusalOf(whole + whole).find("more than one build"), std::string::npos);
  EXPECT_NE(RefusalOf(whole.substr(whole.find('\n') + 1)).find("not build_start"), std::string::npos);

  std::vector<Event> swapped = events;
  std::swap(swapped[2], swapped[3]);
  EXPECT_NE(RefusalOf(AsJsonLines(swapped)).find("line 4: seq"), std::string::npos);

  std::vector<Event> orphan = events;
  orphan.erase(std::find_if(orphan.begin(), orphan.end(),
                            [](const Event& e) { return e.type == EventType::kPhaseStart; }));
  EXPECT_NE(RefusalOf(AsJsonLines(orphan)).find("never started"), std::string::npos);
}

// What the history keeps of a build (its event log without steps, at most
// kMaxEventsKept events, the last build_finish) is a whole stream: `trtwatch replay
// --build` plays it, with the original's phases (a prefix of them when the log was cut)
// and its outcome.
TEST(ReplayTest, AHistoryEntrysEventLogPlaysWithTheOriginalsPhases) {
  const auto starts = [](const std::vector<Event>& events) {
    std::vector<std::string> lines;
    for (const std::string& line : Shape(events)) {
      if (line.rfind("start ", 0) == 0) lines.push_back(line);
    }
    return lines;
  };
  for (const char* profile : {"small-cnn", "large-transformer", "failing"}) {
    const Played original = Simulated(profile);
    history::BuildRecorder recorder;
    for (const Event& e : original.events) recorder.OnEvent(e);
    const history::HistoryEntry entry = recorder.Entry(original.result);
    EXPECT_LE(entry.events.size(), history::kMaxEventsKept);
    std::string text;
    for (const std::string& line : entry.events) text += line + "\n";
    RecordedStreamRead read = ParseRecordedStream(text, "history entry");
    ASSERT_TRUE(read.stream.has_value()) << profile << ": " << read.error;
    ReplayBackend backend(std::move(*read.stream), ReplayOptions{0, true});
    const Played replayed = RunBackend(backend);
    EXPECT_EQ(replayed.result.status, original.result.status) << profile;
    const std::vector<std::string> played = starts(replayed.events);
    const std::vector<std::string> recorded = starts(original.events);
    ASSERT_LE(played.size(), recorded.size()) << profile;
    EXPECT_FALSE(played.empty()) << profile;
    EXPECT_TRUE(std::equal(played.begin(), played.end(), recorded.begin())) << profile;
  }
}

TEST(ReplayTest, RefusesAMissingOrOversizedFileByName) {
  EXPECT_NE(ReadRecordedStream("/nonexistent/build.jsonl").error.find("cannot read /nonexistent/build.jsonl"),
            std::string::npos);
  const std::string long_line(kMaxLineBytes + 1, 'x');
  EXPECT_NE(RefusalOf(long_line).find("more than 1 MiB"), std::string::npos);
}

}  // namespace
}  // namespace trtwatch::replay
