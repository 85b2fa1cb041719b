// worker_stream: the pure steps between a worker's bytes and what the manager relays.
#include "builds/worker_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/phase_tree.h"
#include "platform/worker_process.h"
#include "support/event_builders.h"

namespace trtwatch::builds {
namespace {

std::vector<std::string> Split(LineSplitter& splitter, const std::vector<std::string>& chunks) {
  std::vector<std::string> lines;
  for (const std::string& chunk : chunks) {
    splitter.Feed(chunk, [&](std::string_view line) { lines.emplace_back(line); });
  }
  return lines;
}

// Why: a pipe delivers any cut of the stream; each protocol line must reach the
// manager whole, once.
TEST(WorkerStreamTest, LinesAreWholeWhereverThePipeCutsThem) {
  LineSplitter splitter;
  EXPECT_EQ(Split(splitter, {"{\"a\":", "1}\n{\"b\"", ":2}\n{\"c\":3}\n{\"d\""}),
            (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
  EXPECT_EQ(Split(splitter, {":4}\n"}), (std::vector<std::string>{"{\"d\":4}"}));
  EXPECT_EQ(splitter.dropped(), 0u);
}

// Why: a worker that writes without newlines must not grow the service's memory.
TEST(WorkerStreamTest, AnOverlongLineIsDroppedAndCounted) {
  LineSplitter splitter;
  const std::string big(LineSplitter::kMaxLine + 1, 'x');
  EXPECT_TRUE(Split(splitter, {big}).empty());
  EXPECT_EQ(splitter.dropped(), 1u);
  EXPECT_EQ(Split(splitter, {"ok\n"}), (std::vector<std::string>{"ok"})) << "the next line starts afresh";
}

TEST(WorkerStreamTest, StderrKeepsItsTailOnACharacterBoundary) {
  std::string tail(kStderrTail - 1, 'a');
  tail += "\xC3\xA9";  // é straddles the cut
  tail += "end";
  KeepStderrTail(&tail);
  EXPECT_LE(tail.size(), kStderrTail);
  EXPECT_EQ(tail.substr(tail.size() - 3), "end");
  EXPECT_NE(static_cast<unsigned char>(tail[0]) & 0xC0, 0x80) << "no stray continuation byte first";
}

// Why: the worker only saw a SIGTERM; readers must see the cancel the client asked for.
TEST(WorkerStreamTest, TheServicesCancelIsToldWithItsReasonAndMessage) {
  BuildRecord record;
  record.id = "b-1";
  record.cancel_reason = "api";
  record.cancel_message = "cancelled by POST /builds/b-1/cancel";
  Event cancel;
  cancel.type = EventType::kCancelRequested;
  cancel.reason = CancelReason::kSignal;
  ASSERT_TRUE(AdjustWorkerEvent(record, &cancel));
  EXPECT_EQ(cancel.reason, CancelReason::kApi);
  EXPECT_EQ(cancel.message, record.cancel_message);

  Event start;
  start.type = EventType::kBuildStart;
  start.build = "made-up-by-worker";
  ASSERT_TRUE(AdjustWorkerEvent(record, &start));
  EXPECT_EQ(start.build, "b-1");

  Event step;
  step.type = EventType::kStep;
  EXPECT_FALSE(AdjustWorkerEvent(record, &step)) << "an event the service has nothing to add to stays as written";
}

TEST(WorkerStreamTest, LongWorkerTextsAreCut) {
  BuildRecord record;
  Event log;
  log.type = EventType::kLog;
  log.message = std::string(kMaxWorkerText + 100, 'm');
  ASSERT_TRUE(AdjustWorkerEvent(record, &log));
  EXPECT_LE(log.message.size(), kMaxWorkerText);
}

// Why: every phase_start of a stored log gets its phase_finish, children first, and
// the stream ends with one build_finish, in seq order after what the worker sent.
TEST(WorkerStreamTest, ClosingEventsCloseOpenPhasesChildrenFirst) {
  PhaseTree tree;
  tree.Apply(testing::PhaseStart(0.5, 1, kNoPhase, "build"));
  tree.Apply(testing::PhaseStart(1.0, 2, 1, "tactics"));
  const std::vector<Event> events = ClosingEvents(*tree.Snapshot(), 7, 3.0, BuildState::kFailed, "gone");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, EventType::kPhaseFinish);
  EXPECT_EQ(events[0].id, 2);
  EXPECT_EQ(events[1].id, 1);
  EXPECT_TRUE(events[0].early);
  EXPECT_DOUBLE_EQ(events[0].elapsed, 2.0);
  EXPECT_EQ(events[2].type, EventType::kBuildFinish);
  EXPECT_EQ(events[2].status, BuildStatus::kFailed);
  EXPECT_EQ(events[2].error, "gone");
  EXPECT_EQ(events[2].anomalies.unfinished_phases, 2);
  EXPECT_EQ(events[0].seq, 8u);
  EXPECT_EQ(events[2].seq, 10u);
}

TEST(WorkerStreamTest, AWorkerDeathSaysHowItDied) {
  BuildRecord record;
  record.state = BuildState::kRunning;
  WorkerExit killed;
  killed.signal = 9;
  killed.signal_text = "9 (SIGKILL)";
  WorkerDeath death = JudgeWorkerDeath(record, killed, false, "out of memory");
  EXPECT_EQ(death.state, BuildState::kFailed);
  EXPECT_EQ(death.error, "the worker was killed by signal 9 (SIGKILL) before the build finished: out of memory");

  WorkerExit exited;
  exited.code = 3;
  EXPECT_EQ(JudgeWorkerDeath(record, exited, false, "").error,
            "the worker exited with code 3 before the build finished");
}

// Why: a cancel that had to kill the worker still ends cancelled, saying it was forced.
TEST(WorkerStreamTest, AForcedCancelEndsCancelled) {
  BuildRecord record;
  record.state = BuildState::kCancelling;
  record.cancel_message = "cancelled by POST /builds/b/cancel";
  record.cancel_grace = 2;
  WorkerExit killed;
  killed.signal = 9;
  const WorkerDeath death = JudgeWorkerDeath(record, killed, /*forced_kill=*/true, "noise");
  EXPECT_EQ(death.state, BuildState::kCancelled);
  EXPECT_EQ(death.error, record.cancel_message +
                             "; forced stop: the worker did not stop within the 2 s grace after SIGTERM and was "
                             "killed (SIGKILL)");
}

TEST(WorkerStreamTest, StatesAndStatusesMapBothWays) {
  for (BuildState s : {BuildState::kSucceeded, BuildState::kCancelled, BuildState::kTimedOut, BuildState::kFailed}) {
    EXPECT_EQ(StateFromStatus(StatusFromState(s)), s);
  }
  EXPECT_EQ(StatusFromState(BuildState::kInterrupted), BuildStatus::kFailed);
}

}  // namespace
}  // namespace trtwatch::builds
