// The MCP-over-HTTP session table (mcp/session_table.h): idle expiry, and a full table
// that never drops a session in use (issue 22: at 256 sessions an arbitrary one was
// dropped, one in active use among them).
#include "mcp/session_table.h"

#include <gtest/gtest.h>

#include <string>

namespace trtwatch::mcp {
namespace {

using namespace std::chrono_literals;

struct FakeSession {
  bool in_flight = false;
  bool busy() const { return in_flight; }
};

using Table = SessionTable<FakeSession>;
using Outcome = Table::AddOutcome;

class SessionTableTest : public ::testing::Test {
 protected:
  FakeSession* Add(const std::string& id, Table::Clock::duration at) {
    const Table::AddResult r = table_.Add(id, std::make_unique<FakeSession>(), t0_ + at);
    EXPECT_EQ(r.outcome, Outcome::kAdded) << id;
    return r.session;
  }
  Table table_{256, 30min};
  const Table::Clock::time_point t0_ = Table::Clock::now();
};

TEST_F(SessionTableTest, ASessionWithARequestInFlightSurvives300Initializes) {
  Add("busy", 0s)->in_flight = true;
  for (int i = 0; i < 300; ++i) Add("s" + std::to_string(i), 1s);
  EXPECT_EQ(table_.size(), 256u);
  ASSERT_NE(table_.Use("busy", t0_ + 2s), nullptr);
}

TEST_F(SessionTableTest, ARecentlyUsedSessionSurvivesAndTheLeastRecentlyUsedIdleOneGoes) {
  Add("used", 0s);
  for (int i = 0; i < 300; ++i) {
    Add("s" + std::to_string(i), std::chrono::seconds(i + 1));
    ASSERT_NE(table_.Use("used", t0_ + std::chrono::seconds(i + 1)), nullptr) << "after " << i << " initializes";
  }
  // The oldest idle sessions went first: s0..s44 are gone, s45.. are there.
  EXPECT_EQ(table_.Peek("s44"), nullptr);
  EXPECT_NE(table_.Peek("s45"), nullptr);
}

TEST_F(SessionTableTest, IdleSessionsExpireButOnesWithARequestInFlightDoNot) {
  Add("idle", 0s);
  Add("busy", 0s)->in_flight = true;
  EXPECT_NE(table_.Use("idle", t0_ + 29min), nullptr) << "a request restarts the idle time";
  EXPECT_EQ(table_.Use("idle", t0_ + 59min), nullptr) << "30 min without a request: expired (404)";
  EXPECT_EQ(table_.size(), 1u);
  EXPECT_NE(table_.Use("busy", t0_ + 10h), nullptr);
}

TEST_F(SessionTableTest, AddingDropsExpiredSessions) {
  Add("old", 0s);
  Add("new", 31min);
  EXPECT_EQ(table_.size(), 1u);
  EXPECT_EQ(table_.Peek("old"), nullptr);
}

TEST_F(SessionTableTest, AFullTableOfBusySessionsRefusesANewOneAndKeepsThemAll) {
  for (int i = 0; i < 256; ++i) Add("s" + std::to_string(i), 0s)->in_flight = true;
  const Table::AddResult r = table_.Add("one-more", std::make_unique<FakeSession>(), t0_ + 1h);
  EXPECT_EQ(r.outcome, Outcome::kAllBusy);
  EXPECT_EQ(r.session, nullptr);
  EXPECT_EQ(table_.size(), 256u);
  table_.Peek("s7")->in_flight = false;  // its request ended: it may make room
  EXPECT_EQ(table_.Add("one-more", std::make_unique<FakeSession>(), t0_ + 1h).outcome, Outcome::kAdded);
  EXPECT_EQ(table_.Peek("s7"), nullptr);
}

}  // namespace
}  // namespace trtwatch::mcp
