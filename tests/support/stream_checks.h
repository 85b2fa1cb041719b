// Invariants every event stream must keep, checked by several tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "core/event.h"

namespace trtwatch::testing {

// The events of one type, in stream order.
inline std::vector<Event> OfType(const std::vector<Event>& events, EventType type) {
  std::vector<Event> out;
  for (const Event& e : events) {
    if (e.type == type) out.push_back(e);
  }
  return out;
}

// seq strictly increasing from 1, t non-decreasing, exactly one build_start first and
// one build_finish last, every phase_start matched by exactly one phase_finish (and no
// finish or step without a start), steps within [0, total).
inline void ExpectWellFormedStream(const std::vector<Event>& events) {
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().type, EventType::kBuildStart);
  EXPECT_EQ(events.back().type, EventType::kBuildFinish);
  std::map<int64_t, int> started;  // id -> finishes seen
  uint64_t last_seq = 0;
  double last_t = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    EXPECT_GT(e.seq, last_seq) << "at index " << i;
    EXPECT_GE(e.t, last_t) << "at index " << i;
    last_seq = e.seq;
    last_t = e.t;
    if (i > 0) {
      EXPECT_NE(e.type, EventType::kBuildStart);
    }
    if (i + 1 < events.size()) {
      EXPECT_NE(e.type, EventType::kBuildFinish);
    }
    switch (e.type) {
      case EventType::kPhaseStart:
        EXPECT_EQ(started.count(e.id), 0u) << "phase id reused: " << e.id;
        started[e.id] = 0;
        if (e.parent != kNoPhase) {
          auto parent = started.find(e.parent);
          ASSERT_NE(parent, started.end()) << "parent " << e.parent << " never started";
          EXPECT_EQ(parent->second, 0) << "parent " << e.parent << " already finished";
        }
        break;
      case EventType::kStep:
        ASSERT_EQ(started.count(e.id), 1u) << "step for unknown phase " << e.id;
        EXPECT_EQ(started[e.id], 0) << "step after finish of " << e.id;
        EXPECT_GE(e.step, 0);
        EXPECT_LT(e.step, e.total);
        EXPECT_FALSE(e.phase.empty());
        break;
      case EventType::kPhaseFinish:
        ASSERT_EQ(started.count(e.id), 1u) << "finish for unknown phase " << e.id;
        EXPECT_EQ(++started[e.id], 1) << "phase " << e.id << " finished twice";
        EXPECT_EQ(e.early, e.completed < e.total);
        break;
      default:
        break;
    }
  }
  for (const auto& [id, finishes] : started) EXPECT_EQ(finishes, 1) << "phase " << id << " never finished";
}

}  // namespace trtwatch::testing
