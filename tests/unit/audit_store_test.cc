// The audit trail (builds/audit_entry.h) in both record stores — append, pages newest
// first with filters, pruning by age, the migration to step 5 from a step-4 database —
// and concurrent appends from two PostgreSQL replicas; then the entry's checks and
// the AuditLog that writes entries after actions (builds/audit_log.h).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "builds/audit_entry.h"
#include "builds/audit_log.h"
#include "builds/metrics.h"
#include "builds/retention.h"
#include "support/fake_clock.h"
#include "support/store_fixtures.h"

namespace trtwatch::builds {
namespace {

using namespace store_fixtures;  // NOLINT: the fixtures (support/store_fixtures.h)

AuditEntry Entry(int64_t at, std::string user, std::string_view action, std::string target,
                 std::string detail = "{}") {
  AuditEntry e;
  e.at = at;
  e.user = std::move(user);
  e.action = std::string(action);
  e.target = std::move(target);
  e.detail = std::move(detail);
  return e;
}

std::vector<std::string> TargetsOf(const AuditEntries& page) {
  std::vector<std::string> targets;
  for (const AuditEntry& e : page.entries) targets.push_back(e.target);
  return targets;
}

template <class Fixture>
class AuditStoreTest : public StoreBehaviourTest<Fixture> {};
TYPED_TEST_SUITE(AuditStoreTest, Stores, StoreName);

TYPED_TEST(AuditStoreTest, AppendsAndPagesNewestFirstWithFilters) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  std::vector<int64_t> seqs;
  for (const AuditEntry& e : {Entry(100, "ana", audit_action::kBuildSubmit, "b_1", R"({"model":"m.onnx"})"),
                              Entry(101, "bo", audit_action::kBuildSubmit, "b_2"),
                              Entry(102, "ana", audit_action::kBuildCancel, "b_1", R"({"reason":"api"})"),
                              Entry(103, "ana", audit_action::kModelUpload, "resnet"),
                              Entry(104, "bo", audit_action::kModelDelete, "resnet")}) {
    const Result<int64_t> seq = store->AppendAudit(e);
    ASSERT_TRUE(seq.ok()) << seq.error();
    seqs.push_back(*seq);
  }
  EXPECT_TRUE(std::is_sorted(seqs.begin(), seqs.end()));
  EXPECT_EQ(std::adjacent_find(seqs.begin(), seqs.end()), seqs.end()) << "a seq given twice";

  AuditQuery q;
  q.limit = 2;
  Result<AuditEntries> first = store->AuditPage(q);
  ASSERT_TRUE(first.ok()) << first.error();
  EXPECT_EQ(TargetsOf(*first), (std::vector<std::string>{"resnet", "resnet"}));
  ASSERT_TRUE(first->next_before);
  EXPECT_EQ(first->entries[0].seq, seqs[4]);
  EXPECT_EQ(first->entries[0].user, "bo");
  EXPECT_EQ(first->entries[0].at, 104);
  q.before = *first->next_before;
  Result<AuditEntries> second = store->AuditPage(q);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(TargetsOf(*second), (std::vector<std::string>{"b_1", "b_2"}));
  EXPECT_EQ(second->entries[0].detail, R"({"reason":"api"})");
  q.before = *second->next_before;
  Result<AuditEntries> last = store->AuditPage(q);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(TargetsOf(*last), (std::vector<std::string>{"b_1"}));
  EXPECT_FALSE(last->next_before) << "no older entries";

  AuditQuery by_user;
  by_user.user = "ana";
  EXPECT_EQ(store->AuditPage(by_user)->entries.size(), 3u);
  AuditQuery by_action;
  by_action.action = std::string(audit_action::kBuildSubmit);
  EXPECT_EQ(TargetsOf(*store->AuditPage(by_action)), (std::vector<std::string>{"b_2", "b_1"}));
  AuditQuery by_prefix;
  by_prefix.target_prefix = "b_";
  by_prefix.user = "ana";
  EXPECT_EQ(store->AuditPage(by_prefix)->entries.size(), 2u);
  by_prefix.target_prefix = "%";  // no wildcards: a literal prefix
  EXPECT_TRUE(store->AuditPage(by_prefix)->entries.empty());
}

TYPED_TEST(AuditStoreTest, RefusesInvalidEntriesAndQueries) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  const Result<int64_t> unknown = store->AppendAudit(Entry(1, "ana", "build.explode", "b_1"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().find("unknown audit action \"build.explode\"; one of build.submit"), std::string::npos);
  EXPECT_FALSE(store->AppendAudit(Entry(1, std::string(65, 'u'), audit_action::kBuildSubmit, "b_1")).ok());
  EXPECT_FALSE(store->AppendAudit(Entry(1, "ana", audit_action::kBuildSubmit, "b_1", "[1]")).ok());
  AuditQuery q;
  q.limit = 1001;
  const Result<AuditEntries> refused = store->AuditPage(q);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), "limit must be 1 to 1000");
  EXPECT_TRUE(store->AuditPage({})->entries.empty()) << "nothing was stored";
}

TYPED_TEST(AuditStoreTest, PrunesEntriesOlderThanTheRetention) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  for (int64_t at : {1000, 2000, 3000}) {
    ASSERT_TRUE(store->AppendAudit(Entry(at, "ana", audit_action::kUiSignIn, "")).ok());
  }
  RetentionPolicy policy;
  policy.audit_max_age_seconds = 1500;
  const Result<int64_t> pruned = PruneAuditTrail(*store, policy, 3600);  // cut-off: 2100
  ASSERT_TRUE(pruned.ok()) << pruned.error();
  EXPECT_EQ(*pruned, 2);
  Result<AuditEntries> left = store->AuditPage({});
  ASSERT_EQ(left->entries.size(), 1u);
  EXPECT_EQ(left->entries[0].at, 3000);
  policy.audit_max_age_seconds = 0;  // forever
  EXPECT_EQ(*PruneAuditTrail(*store, policy, 1e12), 0);
  EXPECT_EQ(store->AuditPage({})->entries.size(), 1u);
  // A pruned seq is never given again.
  const int64_t next = *store->AppendAudit(Entry(4000, "ana", audit_action::kUiSignOut, ""));
  EXPECT_GT(next, left->entries[0].seq);
}

TYPED_TEST(AuditStoreTest, AStep4DatabaseMigratesToStep5AndKeepsItsRecords) {
  {
    auto store = this->Open();
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->Put("a", "succeeded", "{}").ok());
  }
  // Back to step 4: without the audit table, at version 4.
  this->store_.DropAuditTable();
  this->store_.SetSchemaVersion(4);
  auto store = this->Open();
  ASSERT_TRUE(store);
  EXPECT_EQ(this->store_.SchemaVersion(), kCurrentSchema);
  EXPECT_EQ(store->Get("a").value(), "{}");
  const Result<int64_t> seq = store->AppendAudit(Entry(1, "ana", audit_action::kBuildSubmit, "a"));
  EXPECT_TRUE(seq.ok()) << seq.error();
}

// ---- PostgreSQL: replicas append to one trail ----

class PostgresAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string skip = pg_.SetUp(""); !skip.empty()) GTEST_SKIP() << skip;
  }
  PostgresFixture pg_;
};

// Two replicas (each its own store and connection) appending at once: every entry
// is kept, and every seq is given once.
TEST_F(PostgresAuditTest, ConcurrentAppendsFromTwoReplicasLoseNothing) {
  StoreOpening a = pg_.Open();
  StoreOpening b = pg_.Open();
  ASSERT_TRUE(a.store && b.store);
  constexpr int kEach = 200;
  auto append = [](RecordStore* store, const std::string& user, std::vector<int64_t>* seqs) {
    for (int i = 0; i < kEach; ++i) {
      const Result<int64_t> seq = store->AppendAudit(Entry(i, user, audit_action::kBuildSubmit, std::to_string(i)));
      if (seq.ok()) seqs->push_back(*seq);
    }
  };
  std::vector<int64_t> seqs_a, seqs_b;
  std::thread ta(append, a.store.get(), "a", &seqs_a);
  std::thread tb(append, b.store.get(), "b", &seqs_b);
  ta.join();
  tb.join();
  ASSERT_EQ(seqs_a.size() + seqs_b.size(), static_cast<size_t>(2 * kEach)) << "an append failed";
  std::set<int64_t> all(seqs_a.begin(), seqs_a.end());
  all.insert(seqs_b.begin(), seqs_b.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(2 * kEach)) << "a seq given twice";
  std::set<int64_t> read;
  AuditQuery q;
  q.limit = 150;
  for (;;) {
    Result<AuditEntries> page = a.store->AuditPage(q);
    ASSERT_TRUE(page.ok()) << page.error();
    for (const AuditEntry& e : page->entries) read.insert(e.seq);
    if (!page->next_before) break;
    q.before = *page->next_before;
  }
  EXPECT_EQ(read, all) << "the pages read back every entry, once";
}

// ---- the entry's checks and the log ----

TEST(AuditEntryTest, ChecksEveryValueAndNamesTheBound) {
  EXPECT_TRUE(CheckAuditEntry(Entry(1, "ana", audit_action::kModelUpload, "resnet", R"({"size":3})")).ok());
  EXPECT_EQ(CheckAuditEntry(Entry(1, "", audit_action::kUiSignIn, "")).error(),
            "the audit entry names no user; record \"anonymous\" instead");
  EXPECT_EQ(CheckAuditEntry(Entry(1, std::string(65, 'u'), audit_action::kUiSignIn, "")).error(),
            "the user has 65 bytes; at most 64 are kept");
  EXPECT_EQ(CheckAuditEntry(Entry(1, "ana", audit_action::kUiSignIn, std::string(257, 't'))).error(),
            "the target has 257 bytes; at most 256 are kept");
  EXPECT_EQ(CheckAuditEntry(Entry(1, "a\nb", audit_action::kUiSignIn, "")).error(),
            "the user holds a control character (a line break, a tab…)");
  EXPECT_EQ(CheckAuditEntry(Entry(1, "a\xff", audit_action::kUiSignIn, "")).error(), "the user is not valid UTF-8");
  EXPECT_EQ(CheckAuditEntry(Entry(1, "ana", audit_action::kUiSignIn, "", "\"x\"")).error(),
            "the detail is not a JSON object");
  const std::string big = "{\"x\":\"" + std::string(4100, 'x') + "\"}";
  EXPECT_NE(CheckAuditEntry(Entry(1, "ana", audit_action::kUiSignIn, "", big)).error().find("at most 4096"),
            std::string::npos);
  for (std::string_view action : kAuditActions) EXPECT_TRUE(IsAuditAction(action)) << action;
  EXPECT_FALSE(IsAuditAction("access.refused"));
}

TEST(AuditEntryTest, QueriesAreBounded) {
  AuditQuery q;
  EXPECT_TRUE(CheckAuditQuery(q).ok());
  q.limit = 0;
  EXPECT_EQ(CheckAuditQuery(q).error(), "limit must be 1 to 1000");
  q.limit = 10;
  q.action = "nope";
  EXPECT_NE(CheckAuditQuery(q).error().find("action must be one of build.submit, build.cancel"), std::string::npos);
  q.action.clear();
  q.before = -1;
  EXPECT_FALSE(CheckAuditQuery(q).ok());
}

class AuditLogTest : public StoreBehaviourTest<SqliteFixture> {};

TEST_F(AuditLogTest, RecordsTheCallerOrAnonymousAtTheClocksTimeAndBoundsValues) {
  auto store = Open();
  ASSERT_TRUE(store);
  FakeClock clock;
  clock.AdvanceSeconds(90.7);
  Metrics metrics;
  AuditLog log(*store, clock, metrics);
  EXPECT_TRUE(log.Record("ana", audit_action::kBuildSubmit, "b_1", R"({"model":"m"})"));
  EXPECT_TRUE(log.Record("", audit_action::kModelDelete, std::string(300, 'm')));
  EXPECT_TRUE(log.Record("bo", audit_action::kModelUpload, "x", "{\"x\":\"" + std::string(5000, 'x') + "\"}"));
  Result<AuditEntries> page = store->AuditPage({});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->entries.size(), 3u);
  EXPECT_EQ(page->entries[2].user, "ana");
  EXPECT_EQ(page->entries[2].at, static_cast<int64_t>(FakeClock::kStartUnix) + 90);
  EXPECT_EQ(page->entries[1].user, "anonymous");
  EXPECT_LE(page->entries[1].target.size(), kAuditTargetMax);
  EXPECT_EQ(page->entries[0].detail, "{\"cut\":true}");
  EXPECT_NE(metrics.Render(0, 0).find("trtwatch_audit_write_failures_total 0\n"), std::string::npos);
}

TEST_F(AuditLogTest, AStoreThatFailsCountsTheFailureAndReturnsFalse) {
  auto store = Open();
  ASSERT_TRUE(store);
  FakeClock clock;
  Metrics metrics;
  AuditLog log(*store, clock, metrics);
  store_.BreakWrites();
  EXPECT_FALSE(log.Record("ana", audit_action::kBuildCancel, "b_1"));
  store_.HealWrites();
  EXPECT_NE(metrics.Render(0, 0).find("trtwatch_audit_write_failures_total 1\n"), std::string::npos);
  EXPECT_TRUE(log.Record("ana", audit_action::kBuildCancel, "b_1"));
}

}  // namespace
}  // namespace trtwatch::builds
