#include "protocol/sse_frame.h"
#include "service/sse.h"

#include <gtest/gtest.h>

namespace trtwatch::service {
namespace {

FramedEvent Item(uint64_t seq, bool step, int64_t phase) {
  return FramedEvent{seq, step, phase, std::make_shared<const std::string>(std::to_string(seq))};
}

TEST(SseFrameTest, HasIdEventDataAndABlankLine) {
  EXPECT_EQ(SseFrame(7, "step", R"({"seq":7})"), "id: 7\nevent: step\ndata: {\"seq\":7}\n\n");
}

TEST(SseFrameTest, SplitsEmbeddedNewlinesIntoDataLines) {
  EXPECT_EQ(SseFrame(1, "log", "a\nb"), "id: 1\nevent: log\ndata: a\ndata: b\n\n");
}

TEST(SseFrameTest, RetryField) { EXPECT_EQ(SseRetry(2000), "retry: 2000\n\n"); }

// Why: a finished build's stream ends with its build_finish, and a reconnect gets that
// ending again; the ending's reconnection time (WHATWG HTML, "retry" field) keeps an
// EventSource that never closes itself from asking again every two seconds.
TEST(SseFrameTest, TheEndingAsksEventSourceToWaitADayBeforeReconnecting) {
  EXPECT_EQ(SseFrame(9, "build_finish", "{}"), "id: 9\nevent: build_finish\nretry: 86400000\ndata: {}\n\n");
  EXPECT_EQ(SseFrame(9, "phase_finish", "{}").find("retry"), std::string::npos);
}

TEST(LastEventIdTest, ParsesDecimalAndEmpty) {
  uint64_t seq = 99;
  EXPECT_TRUE(ParseLastEventId("", &seq));
  EXPECT_EQ(seq, 0u);
  EXPECT_TRUE(ParseLastEventId(" 42 ", &seq));
  EXPECT_EQ(seq, 42u);
  EXPECT_TRUE(ParseLastEventId("18446744073", &seq));
  EXPECT_EQ(seq, 18446744073u);
}

TEST(LastEventIdTest, AcceptsTheWholeRangeOfTheSeqType) {
  uint64_t seq = 0;
  EXPECT_TRUE(ParseLastEventId("9223372036854775808", &seq));  // 2^63: as valid as 2^64-1
  EXPECT_EQ(seq, 9223372036854775808u);
  EXPECT_TRUE(ParseLastEventId("18446744073709551615", &seq));  // 2^64-1
  EXPECT_EQ(seq, 18446744073709551615u);
  EXPECT_TRUE(ParseLastEventId("000000000000000000000042", &seq));  // digits, not a length, are the rule
  EXPECT_EQ(seq, 42u);
}

TEST(LastEventIdTest, RefusesAnythingElse) {
  uint64_t seq = 0;
  for (const char* bad : {"abc", "-1", "+1", "1.5", "12a", "0x10", "1 2", "18446744073709551616",
                          "99999999999999999999"}) {
    EXPECT_FALSE(ParseLastEventId(bad, &seq)) << bad;
  }
}

TEST(SseQueueTest, KeepsEveryEventBelowTheCoalescingMark) {
  SseQueue q(/*coalesce_at=*/10, /*limit=*/20);
  for (uint64_t i = 1; i <= 5; ++i) EXPECT_EQ(q.Push(Item(i, true, 1)), SseQueue::PushResult::kQueued);
  for (uint64_t i = 1; i <= 5; ++i) EXPECT_EQ(q.Pop()->seq, i);
  EXPECT_TRUE(q.empty());
}

TEST(SseQueueTest, CoalescesStepsOfAPhaseWhenBehindAndKeepsIdsIncreasing) {
  SseQueue q(/*coalesce_at=*/2, /*limit=*/100);
  q.Push(Item(1, false, 0));  // phase_start
  q.Push(Item(2, true, 5));
  q.Push(Item(3, false, 0));  // a structural event after the step
  EXPECT_EQ(q.Push(Item(4, true, 5)), SseQueue::PushResult::kCoalesced);  // replaces seq 2
  EXPECT_EQ(q.Push(Item(5, true, 6)), SseQueue::PushResult::kQueued);     // another phase
  std::vector<uint64_t> seqs;
  while (auto item = q.Pop()) seqs.push_back(item->seq);
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 3, 4, 5}));
  EXPECT_EQ(q.coalesced(), 1u);
}

TEST(SseQueueTest, NeverDropsStructuralEventsButOverflows) {
  SseQueue q(/*coalesce_at=*/2, /*limit=*/4);
  for (uint64_t i = 1; i <= 4; ++i) EXPECT_NE(q.Push(Item(i, false, 0)), SseQueue::PushResult::kOverflow);
  EXPECT_EQ(q.Push(Item(5, false, 0)), SseQueue::PushResult::kOverflow);
  EXPECT_EQ(q.size(), 4u);
  EXPECT_EQ(q.Pop()->seq, 1u);
}

TEST(SseQueueTest, StepsOfOnePhaseNeverOverflowOnceCoalescing) {
  SseQueue q(/*coalesce_at=*/2, /*limit=*/4);
  q.Push(Item(1, false, 0));
  q.Push(Item(2, false, 0));
  for (uint64_t i = 3; i < 1000; ++i) EXPECT_NE(q.Push(Item(i, true, 9)), SseQueue::PushResult::kOverflow);
  EXPECT_EQ(q.size(), 3u);
  q.Pop();
  q.Pop();
  EXPECT_EQ(q.Pop()->seq, 999u);  // latest wins
}

}  // namespace
}  // namespace trtwatch::service
