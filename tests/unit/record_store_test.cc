// One behaviour suite for every record store (typed over SQLite and PostgreSQL: each
// store's fixture says how to open it on a test's own location, break and heal its
// writes, and read or set its schema version), then what only one store has.
#include "builds/stores/record_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <utility>

#include "builds/build_group.h"
#include "builds/build_record.h"
#include "builds/stores/open_record_store.h"
#include "builds/stores/postgres_store.h"
#include "builds/retention.h"
#include "builds/stores/schema_migrations.h"
#include "builds/stores/sqlite_store.h"
#include "support/faulty_sqlite_vfs.h"
#include "support/postgres_server.h"
#include "support/store_fixtures.h"

namespace trtwatch::builds {
namespace {

using Outcome = StoreOpening::Outcome;
using namespace store_fixtures;  // NOLINT: the fixtures and kCurrentSchema (support/store_fixtures.h)
TYPED_TEST_SUITE(StoreBehaviourTest, Stores, StoreName);

TYPED_TEST(StoreBehaviourTest, PutGetAndUpdateKeepCreationOrder) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->Put("a", "queued", "{\"id\":\"a\"}").ok());
  ASSERT_TRUE(store->Put("b", "running", "{\"id\":\"b\"}").ok());
  ASSERT_TRUE(store->Put("a", "succeeded", "{\"id\":\"a\",\"v\":2}").ok());
  EXPECT_EQ(store->Get("a").value(), "{\"id\":\"a\",\"v\":2}");
  EXPECT_FALSE(store->Get("zz").value());
  auto page = store->List({}, 10, 0).value();
  ASSERT_EQ(page.docs.size(), 2u);
  EXPECT_EQ(page.docs[0], "{\"id\":\"b\"}");  // newest first, the update did not reorder
  EXPECT_FALSE(page.next_cursor);
  EXPECT_EQ(store->WithStatus({"succeeded", "queued"}).value(), (std::vector<std::string>{"{\"id\":\"a\",\"v\":2}"}));
}

TYPED_TEST(StoreBehaviourTest, PaginatesAndFilters) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store->Put("id" + std::to_string(i), i % 2 ? "failed" : "succeeded", std::to_string(i)).ok());
  }
  auto first = store->List({}, 2, 0).value();
  EXPECT_EQ(first.docs, (std::vector<std::string>{"4", "3"}));
  ASSERT_TRUE(first.next_cursor);
  auto second = store->List({}, 2, *first.next_cursor).value();
  EXPECT_EQ(second.docs, (std::vector<std::string>{"2", "1"}));
  ASSERT_TRUE(second.next_cursor);
  auto third = store->List({}, 2, *second.next_cursor).value();
  EXPECT_EQ(third.docs, (std::vector<std::string>{"0"}));
  EXPECT_FALSE(third.next_cursor);
  EXPECT_EQ(store->List({}, 5, 0).value().docs.size(), 5u);
  EXPECT_FALSE(store->List({}, 5, 0).value().next_cursor) << "exactly a page: no next";
  EXPECT_EQ(store->List({"failed"}, 10, 0).value().docs, (std::vector<std::string>{"3", "1"}));
  auto failed = store->List({"failed"}, 1, 0).value();
  ASSERT_TRUE(failed.next_cursor);
  EXPECT_EQ(store->List({"failed"}, 1, *failed.next_cursor).value().docs, (std::vector<std::string>{"1"}));
  EXPECT_EQ(store->WithStatus({"succeeded"}).value(), (std::vector<std::string>{"0", "2", "4"}));
  EXPECT_TRUE(store->WithStatus({}).value().empty());
}

// GET /builds?model=: the record's model, or a simulated build's profile, contains it.
TYPED_TEST(StoreBehaviourTest, ListsTheBuildsOfAModel) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  const std::string real = R"({"id":"r","model":"/models/resnet50.onnx","request":{"model":"resnet50.onnx"}})";
  const std::string simulated = R"({"id":"s","model":null,"request":{"simulate":"small-cnn"}})";
  ASSERT_TRUE(store->Put("r", "succeeded", real).ok());
  ASSERT_TRUE(store->Put("s", "running", simulated).ok());
  EXPECT_EQ(store->List({}, 10, 0, "resnet").value().docs, (std::vector<std::string>{real}));
  EXPECT_EQ(store->List({}, 10, 0, "small-cnn").value().docs, (std::vector<std::string>{simulated}));
  EXPECT_EQ(store->List({"succeeded"}, 10, 0, "small-cnn").value().docs, (std::vector<std::string>{}));
  EXPECT_EQ(store->List({}, 10, 0, "%").value().docs, (std::vector<std::string>{})) << "a substring, not a LIKE pattern";
  EXPECT_EQ(store->List({}, 10, 0, "").value().docs.size(), 2u);
}

TYPED_TEST(StoreBehaviourTest, EventLogSurvivesReopenAndReplaysAfterASeq) {
  {
    auto store = this->Open();
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->AppendEvents("a", {{1, "e1"}, {2, "e2"}}).ok());
    ASSERT_TRUE(store->AppendEvents("a", {{3, "e3"}}).ok());
    ASSERT_TRUE(store->AppendEvents("b", {{1, "other"}}).ok());
    ASSERT_TRUE(store->AppendEvents("a", {}).ok());
    ASSERT_TRUE(store->Put("a", "running", "{}").ok());
  }
  auto store = this->Open();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->LastSeq("a").value(), 3u);
  EXPECT_EQ(store->LastSeq("none").value(), 0u);
  auto after = store->EventsAfter("a", 1).value();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].seq, 2u);
  EXPECT_EQ(after[0].json, "e2");
  EXPECT_EQ(after[1].json, "e3");
  EXPECT_TRUE(store->EventsAfter("a", 3).value().empty());
  EXPECT_EQ(store->Get("a").value(), "{}");
}

TYPED_TEST(StoreBehaviourTest, EventPagesAreBoundedAndAStoredSeqKeepsItsEvent) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  std::vector<StoredEvent> events;
  for (uint64_t i = 1; i <= 10; ++i) events.push_back({i, "e" + std::to_string(i)});
  ASSERT_TRUE(store->AppendEvents("a", events).ok());
  ASSERT_TRUE(store->AppendEvents("a", {{10, "again"}, {11, "e11"}}).ok());  // a replayed batch
  std::vector<StoredEvent> page{{99, "stale"}};
  ASSERT_TRUE(Into(store->EventsPage("a", 2, 8, 3), &page));
  ASSERT_EQ(page.size(), 3u);
  EXPECT_EQ(page[0].seq, 3u);
  EXPECT_EQ(page[2].seq, 5u);
  ASSERT_TRUE(Into(store->EventsPage("a", 5, 8, 10), &page));
  ASSERT_EQ(page.size(), 3u);
  EXPECT_EQ(page.back().seq, 8u);
  ASSERT_TRUE(Into(store->EventsPage("a", 9, UINT64_MAX, 10), &page));
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0].json, "e10");
  EXPECT_EQ(page[1].json, "e11");
  ASSERT_TRUE(Into(store->EventsPage("zz", 0, 100, 10), &page));
  EXPECT_TRUE(page.empty());
}

// Long logs: batches larger than one statement's rows, replays longer than one read.
TYPED_TEST(StoreBehaviourTest, LongLogsAppendAndReplayWhole) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  std::vector<StoredEvent> events;
  for (uint64_t i = 1; i <= 2345; ++i) events.push_back({i, "{\"seq\":" + std::to_string(i) + "}"});
  ASSERT_TRUE(store->AppendEvents("long", events).ok());
  EXPECT_EQ(store->LastSeq("long").value(), 2345u);
  uint64_t expected = 1001;
  ASSERT_TRUE(store->ForEachEvent("long", 1000, [&](const StoredEvent& e) {
    EXPECT_EQ(e.seq, expected);
    EXPECT_EQ(e.json, "{\"seq\":" + std::to_string(expected) + "}");
    ++expected;
  }).ok());
  EXPECT_EQ(expected, 2346u);
}

// The service's history (docs/history.md): filtered, newest first, replaced by build id,
// kept across a reopen, and bounded by age and count.
TYPED_TEST(StoreBehaviourTest, HistoryFiltersNewestFirstAndPrunesByAgeAndCount) {
  const auto row = [](const std::string& build, const std::string& key, const std::string& model,
                      const std::string& status, int64_t finished_at) {
    return HistoryRow{build, key, model, "simulated", status, finished_at, "{\"build\":\"" + build + "\"}"};
  };
  {
    auto store = this->Open();
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->PutHistory(row("b1", "k1", "simulated:small-cnn", "succeeded", 100)).ok());
    ASSERT_TRUE(store->PutHistory(row("b2", "k1", "simulated:small-cnn", "failed", 200)).ok());
    ASSERT_TRUE(store->PutHistory(row("b3", "k2", "/models/resnet50.onnx", "succeeded", 300)).ok());
    ASSERT_TRUE(store->PutHistory(row("b1", "k1", "simulated:small-cnn", "succeeded", 150)).ok());  // replaced, not added
  }
  auto store = this->Open();  // what was stored outlives the process
  ASSERT_TRUE(store);
  const auto query_of = [](auto set) {
    HistoryQuery q;
    set(q);
    return q;
  };
  const auto builds = [&](const HistoryQuery& q) {
    const Result<std::vector<std::string>> read = store->History(q);
    EXPECT_TRUE(read.ok()) << read.error();
    std::vector<std::string> ids;
    for (const std::string& entry : read.ok() ? *read : std::vector<std::string>{}) ids.push_back(entry.substr(10, 2));
    return ids;
  };
  EXPECT_EQ(builds(HistoryQuery()), (std::vector<std::string>{"b3", "b2", "b1"}));
  EXPECT_EQ(builds(query_of([](HistoryQuery& q) { q.model = "small"; })), (std::vector<std::string>{"b2", "b1"}));
  EXPECT_EQ(builds(query_of([](HistoryQuery& q) { q.model = "small"; q.status = "succeeded"; })), (std::vector<std::string>{"b1"}));
  EXPECT_EQ(builds(query_of([](HistoryQuery& q) { q.key = "k2"; })), (std::vector<std::string>{"b3"}));
  EXPECT_EQ(builds(query_of([](HistoryQuery& q) { q.build = "b2"; })), (std::vector<std::string>{"b2"}));
  EXPECT_EQ(builds(query_of([](HistoryQuery& q) { q.backend = "tensorrt"; })), (std::vector<std::string>{}));
  EXPECT_EQ(builds(query_of([](HistoryQuery& q) { q.finished_after = 200; })), (std::vector<std::string>{"b3", "b2"}));
  EXPECT_EQ(builds(query_of([](HistoryQuery& q) { q.limit = 1; })), (std::vector<std::string>{"b3"}));
  EXPECT_EQ(builds(query_of([](HistoryQuery& q) { q.model = "%"; })), (std::vector<std::string>{})) << "a substring, not a LIKE pattern";

  EXPECT_EQ(store->PruneHistory(0, 0).value(), 0) << "no bound: nothing removed";
  EXPECT_EQ(store->PruneHistory(160, 0).value(), 1) << "older than the age bound";
  EXPECT_EQ(builds(HistoryQuery()), (std::vector<std::string>{"b3", "b2"}));
  EXPECT_EQ(store->PruneHistory(0, 1).value(), 1) << "beyond the count bound";
  EXPECT_EQ(builds(HistoryQuery()), (std::vector<std::string>{"b3"}));
}

TYPED_TEST(StoreBehaviourTest, RetentionPrunesOnlyFinishedBuildsWithTheirLogsAndEngines) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  const std::string& dir = this->dir_;
  std::filesystem::create_directories(dir + "/engines");
  auto put = [&](const std::string& id, BuildState state, double finished_at) {
    BuildRecord r;
    r.id = id;
    r.state = state;
    r.created_at = finished_at - 10;
    r.finished_at = IsFinal(state) ? finished_at : 0;
    ASSERT_TRUE(store->Put(id, std::string(BuildStateName(state)), RecordToJson(r)).ok());
    ASSERT_TRUE(store->AppendEvents(id, {{1, "{}"}, {2, "{}"}}).ok());
    std::ofstream(dir + "/engines/" + id + ".engine") << "engine";
  };
  const double now = 1764500000;
  put("old_done", BuildState::kSucceeded, now - 3 * 86400);
  put("old_running", BuildState::kRunning, now - 3 * 86400);
  put("mid_failed", BuildState::kFailed, now - 2 * 86400);
  put("new_done", BuildState::kCancelled, now - 60);

  // By age: finished more than a day ago. A running build is never pruned.
  PruneReport r = PruneFinishedBuilds(*store, {86400, 0}, now, {dir + "/engines", dir + "/groups"});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.removed, 2u);
  EXPECT_FALSE(store->Get("old_done").value());
  EXPECT_FALSE(store->Get("mid_failed").value());
  EXPECT_TRUE(store->EventsAfter("old_done", 0).value().empty());
  EXPECT_FALSE(std::filesystem::exists(dir + "/engines/old_done.engine"));
  EXPECT_TRUE(store->Get("old_running").value());
  EXPECT_EQ(store->EventsAfter("old_running", 0).value().size(), 2u);
  EXPECT_TRUE(store->Get("new_done").value());

  // By count: the newest finished one stays, whatever its age.
  put("newest_done", BuildState::kSucceeded, now - 30);
  r = PruneFinishedBuilds(*store, {0, 1}, now, {dir + "/engines", dir + "/groups"});
  EXPECT_EQ(r.removed, 1u);
  EXPECT_FALSE(store->Get("new_done").value());
  EXPECT_TRUE(store->Get("newest_done").value());
  EXPECT_TRUE(store->Get("old_running").value());
  EXPECT_TRUE(std::filesystem::exists(dir + "/engines/newest_done.engine"));
  EXPECT_EQ(PruneFinishedBuilds(*store, {}, now, {dir + "/engines", dir + "/groups"}).removed, 0u);  // no policy: nothing
}

// A group is found by its first member (builds/build_groups.h): the retention that prunes
// it removes the group's folder, whose engine links would otherwise keep their space.
TYPED_TEST(StoreBehaviourTest, RetentionRemovesTheFolderOfAGroupWhoseFirstMemberItPruned) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  const std::string groups = this->dir_ + "/groups";
  const double now = 1764500000;
  const std::string old_group = "g_" + std::string(32, 'a');
  const std::string new_group = "g_" + std::string(32, 'b');
  for (const auto& [gid, finished_at] : {std::pair{old_group, now - 3 * 86400}, std::pair{new_group, now - 60}}) {
    BuildRecord r;
    r.id = GroupMemberBuildId(gid, 0);
    r.state = BuildState::kSucceeded;
    r.created_at = finished_at - 10;
    r.finished_at = finished_at;
    ASSERT_TRUE(store->Put(r.id, "succeeded", RecordToJson(r)).ok());
    std::filesystem::create_directories(groups + "/" + gid);
    std::ofstream(groups + "/" + gid + "/manifest.json") << "{}";
  }
  std::filesystem::create_directories(groups + "/not-a-group");

  const PruneReport r = PruneFinishedBuilds(*store, {86400, 0}, now, {this->dir_ + "/engines", groups});
  EXPECT_EQ(r.removed, 1u);
  EXPECT_EQ(r.removed_groups, 1u);
  EXPECT_FALSE(std::filesystem::exists(groups + "/" + old_group));
  EXPECT_TRUE(std::filesystem::exists(groups + "/" + new_group + "/manifest.json"));
  EXPECT_TRUE(std::filesystem::exists(groups + "/not-a-group")) << "only group folders are the service's";
}

// Why #4: every write fails (SQLite: a full disk; PostgreSQL: the server is gone), each
// is reported with last_error, a failed batch leaves nothing, and the store works again
// once the storage is back (SQLite: no transaction left open; PostgreSQL: reconnected).
TYPED_TEST(StoreBehaviourTest, WriteFailuresAreReportedAndTheStoreRecovers) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->AppendEvents("b", {{1, "{}"}}).ok());
  this->store_.BreakWrites();
  const Status appended = store->AppendEvents("b", {{2, "{}"}, {3, "{}"}});
  EXPECT_FALSE(appended.ok());
  EXPECT_FALSE(appended.error().empty());
  const Status put = store->Put("b", "running", "{}");
  EXPECT_FALSE(put.ok());
  EXPECT_FALSE(put.error().empty());
  EXPECT_FALSE(store->Probe().ok());
  const Result<std::vector<std::string>> pruned = store->Prune({"failed"}, "", 1);
  EXPECT_FALSE(pruned.ok() && !pruned->empty());
  this->store_.HealWrites();
  const Status healed = ProbeWithin(*store, std::chrono::seconds(5));
  EXPECT_TRUE(healed.ok()) << healed.error();
  EXPECT_EQ(store->LastSeq("b").value(), 1u) << "the failed batch left nothing";
  const Status again = store->AppendEvents("b", {{2, "{}"}, {3, "{}"}});
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(store->LastSeq("b").value(), 3u);
  EXPECT_TRUE(store->Put("b", "failed", "{}").ok());
  EXPECT_EQ(store->Get("b").value(), "{}");
}

TYPED_TEST(StoreBehaviourTest, TheSchemaIsVersionedAndReopensAtItsVersion) {
  ASSERT_TRUE(this->Open());
  EXPECT_EQ(this->store_.SchemaVersion(), kCurrentSchema);
  auto again = this->Open();  // current: nothing to migrate
  ASSERT_TRUE(again);
  EXPECT_EQ(this->store_.SchemaVersion(), kCurrentSchema);
}

TYPED_TEST(StoreBehaviourTest, ANewerSchemaIsRefusedAtStart) {
  {
    auto store = this->Open();
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->Put("a", "queued", "{}").ok());
  }
  this->store_.SetSchemaVersion(7);
  StoreOpening opened = this->store_.Open();
  EXPECT_EQ(opened.outcome, Outcome::kNewerSchema);
  EXPECT_FALSE(opened.store);
  EXPECT_NE(opened.error.find("was written by a newer trtwatch (schema 7, this binary knows up to 5): upgrade trtwatch"),
            std::string::npos)
      << opened.error;
  this->store_.SetSchemaVersion(kCurrentSchema);
  auto store = this->Open();
  ASSERT_TRUE(store) << "refused, not changed";
  EXPECT_EQ(store->Get("a").value(), "{}");
}

// ---- the queue (builds/stores/build_queue.h), the same on both stores ----

// A queued record as the manager writes it.
bool PutQueued(RecordStore& store, const std::string& id) { return store.Put(id, "queued", "{\"id\":\"" + id + "\"}").ok(); }

std::vector<std::string> DocsOf(const ClaimResult& claimed) {
  std::vector<std::string> docs;
  for (const ClaimedBuild& b : claimed.builds) docs.push_back(b.doc);
  return docs;
}

TYPED_TEST(StoreBehaviourTest, QueuedBuildsAreClaimedOldestFirstAndEachOnce) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  BuildQueue& queue = store->queue();
  for (const char* id : {"q1", "q2", "q3"}) ASSERT_TRUE(PutQueued(*store, id));
  EXPECT_EQ(queue.CountQueued().count, 3);
  const ClaimResult first = queue.ClaimQueued("a", 2, 15);
  ASSERT_TRUE(first.ok()) << first.error;
  EXPECT_EQ(DocsOf(first), (std::vector<std::string>{"{\"id\":\"q1\"}", "{\"id\":\"q2\"}"}));
  EXPECT_EQ(queue.CountQueued().count, 1) << "claimed builds no longer wait";
  EXPECT_EQ(DocsOf(queue.ClaimQueued("b", 5, 15)), (std::vector<std::string>{"{\"id\":\"q3\"}"}));
  EXPECT_TRUE(queue.ClaimQueued("b", 5, 15).builds.empty());
  EXPECT_TRUE(queue.ClaimQueued("a", 0, 15).builds.empty());
  // A cancel's claim of one build: only while it is queued and nobody's.
  ASSERT_TRUE(PutQueued(*store, "q4"));
  EXPECT_TRUE(queue.ClaimQueuedBuild("q1", "b", 15).builds.empty()) << "a's already";
  EXPECT_EQ(queue.ClaimQueuedBuild("q4", "b", 15).builds.size(), 1u);
  EXPECT_TRUE(queue.ClaimQueuedBuild("q4", "a", 15).builds.empty());
  EXPECT_EQ(queue.CountQueued().count, 0);
  // A build its replica starts at once is stored claimed: nobody else can take it.
  const QueueResult added = queue.AddClaimed("q5", "{}", "a", 15);
  ASSERT_TRUE(added.ok()) << added.error;
  EXPECT_EQ(store->Get("q5").value(), "{}");
  EXPECT_EQ(queue.CountQueued().count, 0);
  EXPECT_TRUE(queue.ClaimQueued("b", 5, 15).builds.empty());
  EXPECT_TRUE(queue.ClaimQueuedBuild("q5", "b", 15).builds.empty());
}

// A replica that stops renewing (a lease of -1 s: lapsed at once) leaves orphans: its running
// builds are claimed by another, which learns whose they were; a claimed build it never
// started goes back to the queue. Renewed leases do not lapse.
TYPED_TEST(StoreBehaviourTest, LapsedLeasesMakeOrphansAndRenewedOnesDoNot) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  BuildQueue& queue = store->queue();
  for (const char* id : {"dead_running", "dead_claimed", "alive"}) ASSERT_TRUE(PutQueued(*store, id));
  ASSERT_EQ(queue.ClaimQueued("dead", 2, -1).builds.size(), 2u);
  ASSERT_TRUE(store->Put("dead_running", "running", "{\"id\":\"dead_running\"}").ok());
  ASSERT_EQ(queue.ClaimQueued("alive", 1, 300).builds.size(), 1u);
  ASSERT_TRUE(store->Put("alive", "running", "{\"id\":\"alive\"}").ok());
  const RenewResult renewed = queue.RenewLeases("alive", 300);
  ASSERT_TRUE(renewed.ok()) << renewed.error;
  EXPECT_EQ(renewed.ids, std::vector<std::string>{"alive"});

  const ClaimResult orphans = queue.ClaimOrphans("heir", 300, /*at_start=*/false);
  ASSERT_TRUE(orphans.ok()) << orphans.error;
  ASSERT_EQ(orphans.builds.size(), 1u);
  EXPECT_EQ(orphans.builds[0].doc, "{\"id\":\"dead_running\"}");
  EXPECT_EQ(orphans.builds[0].previous_owner, "dead");
  EXPECT_TRUE(queue.ClaimOrphans("other", 300, false).builds.empty()) << "the heir holds it now";
  EXPECT_EQ(queue.CountQueued().count, 1) << "the claimed, never started build waits again";
  EXPECT_EQ(DocsOf(queue.ClaimQueued("heir", 5, 300)), std::vector<std::string>{"{\"id\":\"dead_claimed\"}"});
}

// Issue 36: each claim is a new lease generation, and the store checks it in the same
// statement as the write: the replica that lost the lease (paused past it) writes
// nothing more of the build. One ending: once the log holds a build_finish, nobody
// appends to it, and a final record is not concluded again.
TYPED_TEST(StoreBehaviourTest, FencedWritesNeedTheCurrentLeaseAndTheFirstEndingStands) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  BuildQueue& queue = store->queue();
  ASSERT_TRUE(PutQueued(*store, "b"));
  const ClaimResult first = queue.ClaimQueued("paused", 1, -1);  // lapses at once
  ASSERT_EQ(first.builds.size(), 1u);
  const int64_t old_generation = first.builds[0].generation;
  ASSERT_TRUE(store->PutFenced("b", "running", "{\"v\":1}", old_generation).value());
  ASSERT_TRUE(store->AppendEventsFenced("b", {{1, "s1"}, {2, "s2"}}, old_generation, false).value());
  const ClaimResult heir = queue.ClaimOrphans("heir", 300, false);
  ASSERT_EQ(heir.builds.size(), 1u);
  const int64_t generation = heir.builds[0].generation;
  EXPECT_GT(generation, old_generation);

  const Result<bool> late = store->AppendEventsFenced("b", {{3, "late"}}, old_generation, false);
  ASSERT_TRUE(late.ok()) << late.error();
  EXPECT_FALSE(late.value()) << "the lease is the heir's";
  EXPECT_FALSE(store->PutFenced("b", "succeeded", "{\"v\":2}", old_generation).value());
  ASSERT_TRUE(store->AppendEventsFenced("b", {{3, "finish"}}, generation, /*finish=*/true).value());
  EXPECT_FALSE(store->AppendEventsFenced("b", {{4, "after"}}, generation, false).value()) << "after the ending";
  ASSERT_TRUE(store->PutFenced("b", "interrupted", "{\"v\":3}", generation).value());
  EXPECT_TRUE(store->PutFenced("b", "interrupted", "{\"v\":3}", generation).value()) << "a retry of that write";
  EXPECT_FALSE(store->PutFenced("b", "succeeded", "{\"v\":4}", generation).value()) << "concluded once";
  EXPECT_EQ(store->Get("b").value(), "{\"v\":3}");
  std::vector<std::string> log;
  for (const StoredEvent& e : store->EventsAfter("b", 0).value()) log.push_back(e.json);
  EXPECT_EQ(log, (std::vector<std::string>{"s1", "s2", "finish"}));
  // The history entry too: only under the build's current lease.
  HistoryRow row{"b", std::string(64, 'k'), "m", "simulated", "interrupted", 1, "{}", old_generation};
  EXPECT_FALSE(store->PutHistory(row).ok()) << "the old owner's entry is refused";
  row.lease_generation = generation;
  const Status kept = store->PutHistory(row);
  EXPECT_TRUE(kept.ok()) << kept.error();
  HistoryQuery query;
  query.build = "b";
  EXPECT_EQ(store->History(query).value(), std::vector<std::string>{"{}"});
  const QueueResult added = queue.AddClaimed("c", "{}", "a", 15);
  ASSERT_TRUE(added.ok());
  EXPECT_TRUE(store->PutFenced("c", "running", "{}", kFirstLeaseGeneration).value()) << "stored claimed: generation 1";
}

TYPED_TEST(StoreBehaviourTest, ACancelLeftForTheOwnerIsTakenByItOnce) {
  auto store = this->Open();
  ASSERT_TRUE(store);
  BuildQueue& queue = store->queue();
  ASSERT_TRUE(PutQueued(*store, "b"));
  EXPECT_FALSE(queue.RequestCancel("b", "{}").applied) << "queued and nobody's: nobody to ask";
  ASSERT_EQ(queue.ClaimQueued("owner", 1, 300).builds.size(), 1u);
  ASSERT_TRUE(store->Put("b", "running", "{}").ok());
  const ConditionalResult asked = queue.RequestCancel("b", "{\"reason\":\"api\"}");
  ASSERT_TRUE(asked.ok()) << asked.error;
  EXPECT_TRUE(asked.applied);
  EXPECT_TRUE(queue.TakeCancelRequests("someone else").requests.empty());
  const CancelRequestsResult taken = queue.TakeCancelRequests("owner");
  ASSERT_TRUE(taken.ok()) << taken.error;
  ASSERT_EQ(taken.requests.size(), 1u);
  EXPECT_EQ(taken.requests[0].id, "b");
  EXPECT_EQ(taken.requests[0].request, "{\"reason\":\"api\"}");
  EXPECT_TRUE(queue.TakeCancelRequests("owner").requests.empty()) << "taken once";
  ASSERT_TRUE(store->Put("b", "cancelled", "{}").ok());
  EXPECT_FALSE(queue.RequestCancel("b", "{}").applied) << "finished";
}

// The migration runner, over a recording stand-in for a store's schema access.
class RecordingSchema final : public SchemaAccess {
 public:
  explicit RecordingSchema(int version, const char* failing_step = "") : version_(version), failing_(failing_step) {}
  bool Begin() override { return log_ += "begin;", true; }
  std::optional<int> ReadVersion() override { return version_; }
  bool Apply(const char* step) override {
    log_ += std::string(step) + ";";
    return failing_ != step;
  }
  bool WriteVersion(int v) override { return log_ += "version " + std::to_string(v) + ";", true; }
  bool Commit() override { return log_ += "commit;", true; }
  void Rollback() override { log_ += "rollback;"; }
  std::string error() const override { return "step failed"; }
  const std::string& log() const { return log_; }

 private:
  int version_;
  std::string failing_;
  std::string log_;
};

TEST(SchemaMigrationsTest, RunsTheMissingStepsInOrderInOneTransactionOrNone) {
  constexpr const char* kThree[] = {"s1", "s2", "s3"};
  RecordingSchema fresh(0);
  EXPECT_EQ(Migrate(fresh, kThree).outcome, MigrationResult::Outcome::kMigrated);
  EXPECT_EQ(fresh.log(), "begin;s1;s2;s3;version 3;commit;");
  RecordingSchema at_one(1);
  EXPECT_EQ(Migrate(at_one, kThree).outcome, MigrationResult::Outcome::kMigrated);
  EXPECT_EQ(at_one.log(), "begin;s2;s3;version 3;commit;");
  RecordingSchema current(3);
  EXPECT_EQ(Migrate(current, kThree).outcome, MigrationResult::Outcome::kCurrent);
  EXPECT_EQ(current.log(), "begin;rollback;");
  RecordingSchema newer(5);
  const MigrationResult refused = Migrate(newer, kThree);
  EXPECT_EQ(refused.outcome, MigrationResult::Outcome::kNewer);
  EXPECT_EQ(refused.found, 5);
  EXPECT_EQ(newer.log(), "begin;rollback;");
  RecordingSchema failing(0, "s2");
  const MigrationResult failed = Migrate(failing, kThree);
  EXPECT_EQ(failed.outcome, MigrationResult::Outcome::kFailed);
  EXPECT_EQ(failed.error, "step failed");
  EXPECT_EQ(failing.log(), "begin;s1;s2;rollback;");
  EXPECT_EQ(NewerSchemaError("the database \"x\"", 5, 3, "--store"),
            "the database \"x\" was written by a newer trtwatch (schema 5, this binary knows up to 3): upgrade "
            "trtwatch or point --store elsewhere");
}

// ---- SQLite only ----

class RecordStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/trtwatch_store_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<RecordStore> Open() {
    StoreOpening opened = SqliteStore::Open(dir_);
    EXPECT_TRUE(opened.store) << opened.error;
    return std::move(opened.store);
  }
  std::string dir_;
};

TEST_F(RecordStoreTest, RefusesAFileThatIsNotADatabase) {
  {
    FILE* f = std::fopen((dir_ + "/trtwatch.db").c_str(), "w");
    std::fputs("this is not sqlite, just text long enough to have a header.........................", f);
    std::fclose(f);
  }
  StoreOpening opened = SqliteStore::Open(dir_);
  EXPECT_EQ(opened.outcome, Outcome::kDamaged);
  EXPECT_NE(opened.error.find("--data-dir"), std::string::npos) << opened.error;
}

TEST_F(RecordStoreTest, CreatesAPrivateDataDirOrSaysWhyNot) {
  const std::string data = dir_ + "/data";
  ASSERT_TRUE(SqliteStore::Open(data).store);
  EXPECT_EQ(std::filesystem::status(data).permissions(), std::filesystem::perms::owner_all);
  EXPECT_TRUE(SqliteStore::Open(data).store) << "an existing data dir is reused";

  StoreOpening opened = SqliteStore::Open(dir_ + "/missing/data");
  EXPECT_EQ(opened.outcome, Outcome::kUnavailable);
  EXPECT_EQ(opened.error, "cannot create --data-dir \"" + dir_ + "/missing/data\": No such file or directory");
  std::ofstream(dir_ + "/file") << "x";
  EXPECT_EQ(SqliteStore::Open(dir_ + "/file").error, "cannot create --data-dir \"" + dir_ + "/file\": File exists");
}

// The embedded store's refusal names the holder's PID too.
// One process serves a data dir: at its start every running build is an orphan,
// whoever owned it, and its queue is not shared.
TEST_F(RecordStoreTest, AtStartEveryRunningBuildOfTheDataDirIsAnOrphan) {
  auto store = Open();
  ASSERT_TRUE(store);
  EXPECT_FALSE(store->queue().shared());
  ASSERT_TRUE(store->Put("old", "running", "{}").ok());  // before replicas: nobody's
  ASSERT_TRUE(store->Put("mine", "queued", "{}").ok());
  ASSERT_EQ(store->queue().ClaimQueued("earlier-process", 1, 300).builds.size(), 1u);
  ASSERT_TRUE(store->Put("mine", "running", "{}").ok());
  const ClaimResult orphans = store->queue().ClaimOrphans("now", 300, /*at_start=*/true);
  ASSERT_TRUE(orphans.ok()) << orphans.error;
  ASSERT_EQ(orphans.builds.size(), 2u);
  EXPECT_EQ(orphans.builds[0].previous_owner, "");
  EXPECT_EQ(orphans.builds[1].previous_owner, "earlier-process");
}

TEST_F(RecordStoreTest, TheSecondOpenOfADataDirNamesTheHoldersPid) {
  auto first = Open();
  ASSERT_TRUE(first);
  StoreOpening second = SqliteStore::Open(dir_);
  EXPECT_NE(second.error.find("PID " + std::to_string(::getpid())), std::string::npos) << second.error;
}

// Issue 22: records hold model paths and errors. The data dir is narrowed to 0700 and
// the database with its -wal and -shm to 0600, whatever the umask and however the dir
// was made (mkdir -p gives 0755).
TEST_F(RecordStoreTest, TheDataDirAndTheDatabaseFilesAreThisUsersOnly) {
  const std::string data = dir_ + "/data";
  const mode_t old_umask = ::umask(022);
  ASSERT_EQ(::mkdir(data.c_str(), 0755), 0);
  StoreOpening opened = SqliteStore::Open(data);
  ::umask(old_umask);
  ASSERT_TRUE(opened.store) << opened.error;
  ASSERT_TRUE(opened.store->Put("a", "queued", "{}").ok());
  namespace fs = std::filesystem;
  EXPECT_EQ(fs::status(data).permissions(), fs::perms::owner_all);
  for (const char* name : {"/trtwatch.db", "/trtwatch.db-wal", "/trtwatch.db-shm", "/trtwatch.lock"}) {
    EXPECT_EQ(fs::status(data + name).permissions(), fs::perms::owner_read | fs::perms::owner_write) << name;
  }
}

// A database of the release before schema versions (user_version 0, its tables and
// records there) is version 1: kept as it is, records and logs readable, then migrated.
TEST_F(RecordStoreTest, ADatabaseOfTheReleaseBeforeVersionsIsVersion1AndKeepsItsRecords) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ + "/trtwatch.db").c_str(), &db), SQLITE_OK);
    const char* old_release =  // the schema and pragmas exactly as that release wrote them
        "PRAGMA journal_mode=WAL;"
        "CREATE TABLE builds (ord INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,"
        "  status TEXT NOT NULL, doc TEXT NOT NULL);"
        "CREATE INDEX builds_status ON builds(status, ord);"
        "CREATE TABLE events (build_id TEXT NOT NULL, seq INTEGER NOT NULL, json TEXT NOT NULL,"
        "  PRIMARY KEY (build_id, seq)) WITHOUT ROWID;"
        "CREATE TABLE health (k INTEGER PRIMARY KEY, checked REAL NOT NULL);"
        "INSERT INTO builds(id, status, doc) VALUES('old', 'succeeded', '{\"id\":\"old\"}');"
        "INSERT INTO events VALUES('old', 1, 'e1'), ('old', 2, 'e2');";
    ASSERT_EQ(sqlite3_exec(db, old_release, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  auto store = Open();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->Get("old").value(), "{\"id\":\"old\"}");
  EXPECT_EQ(store->LastSeq("old").value(), 2u);
  ASSERT_TRUE(store->Put("new", "queued", "{}").ok());
  EXPECT_EQ(store->List({}, 10, 0).value().docs, (std::vector<std::string>{"{}", "{\"id\":\"old\"}"}));
  store.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ + "/trtwatch.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(s, 0), kCurrentSchema) << "then migrated on";
  sqlite3_finalize(s);
  sqlite3_close(db);
}

TEST(BuildRecordTest, JsonRoundTrips) {
  BuildRecord r;
  r.id = "b_0123";
  r.state = BuildState::kCancelled;
  r.backend = "simulated";
  r.request_json = R"({"simulate":"small-cnn"})";
  r.created_at = 1764474312.345;
  r.started_at = 1764474313.5;
  r.finished_at = 1764474320.25;
  r.cancel_reason = "api";
  r.cancel_message = "by test";
  r.cancel_requested_at = 1764474315.125;
  r.cancel_latency_json = R"({"to_first_false":0.1,"to_return":0.2})";
  r.last_seq = 42;
  r.error = "terminated";
  r.engine = "/data/engines/b_0123.engine";
  r.engine_bytes = 5ULL << 30;  // engines over 4 GiB exist
  r.exit_code = 143;
  BuildRecord back;
  ASSERT_TRUE(RecordFromJson(RecordToJson(r), &back));
  EXPECT_EQ(RecordToJson(back), RecordToJson(r));
  EXPECT_EQ(back.engine_bytes, 5ULL << 30);
  EXPECT_EQ(FormatTime(1764474312.345), "2025-11-30T03:45:12.345Z");
}

TEST(BuildRecordTest, StateNamesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(BuildState::kInterrupted); ++i) {
    BuildState s;
    ASSERT_TRUE(ParseBuildState(BuildStateName(static_cast<BuildState>(i)), &s));
    EXPECT_EQ(static_cast<int>(s), i);
  }
  BuildState s;
  EXPECT_FALSE(ParseBuildState("done", &s));
}

// Why #4: garbage inside the database file is found at start, not served as a
// truncated replay with 200.
TEST_F(RecordStoreTest, ADamagedDatabaseIsRefusedAtStart) {
  {
    auto store = Open();
    ASSERT_TRUE(store);
    std::vector<StoredEvent> events;
    for (uint64_t i = 1; i <= 3000; ++i) events.push_back({i, "{\"seq\":" + std::to_string(i) + ",\"pad\":\"xxxxxxxx\"}"});
    ASSERT_TRUE(store->AppendEvents("b", events).ok());
  }  // closing checkpoints the WAL into the main file
  const std::string db = dir_ + "/trtwatch.db";
  const auto size = std::filesystem::file_size(db);
  ASSERT_GT(size, 40000u);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    const std::string garbage(8192, '\x5a');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  StoreOpening opened = SqliteStore::Open(dir_);
  EXPECT_EQ(opened.outcome, Outcome::kDamaged);
  EXPECT_NE(opened.error.find("is damaged"), std::string::npos) << opened.error;
  EXPECT_NE(opened.error.find("move it"), std::string::npos) << opened.error;
}

// Why #4: a batch that fails part-way (the second write of it) is rolled back whole.
TEST_F(RecordStoreTest, ABatchThatFailsPartWayIsRolledBackWhole) {
  testing::FaultySqliteVfs vfs;
  StoreOpening opened = SqliteStore::Open(dir_, vfs.name());
  ASSERT_TRUE(opened.store) << opened.error;
  RecordStore& store = *opened.store;
  ASSERT_TRUE(store.AppendEvents("b", {{1, "{}"}}).ok());
  vfs.FailWritesAfter(1, SQLITE_FULL);
  EXPECT_FALSE(store.AppendEvents("b", {{2, "{}"}, {3, "{}"}}).ok());
  EXPECT_FALSE(store.Probe().ok());
  vfs.Heal();
  EXPECT_EQ(store.LastSeq("b").value(), 1u);
  vfs.FailWritesAfter(0, SQLITE_IOERR_WRITE);
  EXPECT_FALSE(store.Put("b", "running", "{}").ok());
  vfs.Heal();
  EXPECT_TRUE(store.Probe().ok());
}

// ---- PostgreSQL only ----

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string skip = pg_.SetUp(""); !skip.empty()) GTEST_SKIP() << skip;
  }
  PostgresFixture pg_;
};

TEST_F(PostgresStoreTest, AMalformedUriIsRefusedWithTheForm) {
  for (const std::string uri : {"postgresql://[::1/db", "postgresql://u@host:notaport/db", "postgres://h/db?nosuch=1"}) {
    StoreOpening opened = OpenRecordStore(uri, "/nonexistent/never/made");
    EXPECT_EQ(opened.outcome, Outcome::kInvalid) << uri << ": " << opened.error;
    EXPECT_NE(opened.error.find("postgresql://USER@HOST:PORT/DB"), std::string::npos) << opened.error;
  }
  StoreOpening other = OpenRecordStore("mysql://root:hunter2@h/db", "/tmp");
  EXPECT_EQ(other.outcome, Outcome::kInvalid);
  EXPECT_EQ(other.error.find("hunter2"), std::string::npos) << other.error;
  EXPECT_NE(other.error.find("\"mysql:"), std::string::npos) << other.error;
}

TEST_F(PostgresStoreTest, AnUnreachableServerIsRefusedWithTheFixAndNoPassword) {
  const std::string uri = "postgresql://postgres:s3cret@127.0.0.1:1/" + pg_.db();  // port 1: nothing listens
  const auto start = std::chrono::steady_clock::now();
  StoreOpening opened = PostgresStore::Open(uri);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(opened.outcome, Outcome::kUnavailable);
  EXPECT_NE(opened.error.find("cannot connect to the database \"" + pg_.db() + "\" on 127.0.0.1:1"), std::string::npos)
      << opened.error;
  EXPECT_NE(opened.error.find("start PostgreSQL there, or correct --store"), std::string::npos) << opened.error;
  EXPECT_EQ(opened.error.find("s3cret"), std::string::npos) << opened.error;
}

TEST_F(PostgresStoreTest, ADatabaseWithAnotherProgramsTablesIsRefused) {
  ASSERT_EQ(pg_.server().Exec(pg_.db(), "CREATE TABLE builds (x INTEGER)"), "");
  StoreOpening opened = pg_.Open();
  EXPECT_EQ(opened.outcome, Outcome::kDamaged);
  EXPECT_NE(opened.error.find("is it a trtwatch database?"), std::string::npos) << opened.error;
}

// Replicas share a database: a second store opens beside the first (no lock on the
// database as a whole), and each sees the other's records. After a server restart a
// store reconnects at its next call.
TEST_F(PostgresStoreTest, ReplicasShareTheDatabaseAndReconnectAfterARestart) {
  StoreOpening first = pg_.Open();
  ASSERT_TRUE(first.store) << first.error;
  StoreOpening second = pg_.Open();
  ASSERT_TRUE(second.store) << "a second replica is accepted: " << second.error;
  EXPECT_TRUE(second.store->queue().shared());
  ASSERT_TRUE(first.store->Put("a", "queued", "{}").ok());
  EXPECT_EQ(second.store->Get("a").value(), "{}");
  pg_.BreakWrites();
  pg_.HealWrites();
  EXPECT_FALSE(first.store->Put("a", "running", "{}").ok()) << "the old session is gone";
  const Status reconnected = first.store->Put("a", "running", "{}");
  EXPECT_TRUE(reconnected.ok()) << reconnected.error();
}

// A database that is gone is not asked again at every call: after a failed attempt the
// store answers at once, saying when it tries again, and reconnects after that.
TEST_F(PostgresStoreTest, ALostDatabaseIsRetriedWithBackOff) {
  StoreOpening opened = pg_.Open();
  ASSERT_TRUE(opened.store) << opened.error;
  pg_.BreakWrites();
  EXPECT_FALSE(opened.store->Put("a", "queued", "{}").ok());
  EXPECT_FALSE(opened.store->Probe().ok());  // the session is gone: one attempt to reconnect, refused
  const Status refused = opened.store->Probe();
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("cannot connect to"), std::string::npos) << refused.error();
  EXPECT_NE(refused.error().find("; next attempt in 1 s"), std::string::npos) << refused.error();
  pg_.HealWrites();
  const Status healed = ProbeWithin(*opened.store, std::chrono::seconds(5));
  EXPECT_TRUE(healed.ok()) << healed.error();
}

// Two replicas claiming at once from two threads (each its own store and connection):
// FOR UPDATE SKIP LOCKED gives every queued build to exactly one of them.
TEST_F(PostgresStoreTest, ConcurrentClaimsNeverShareABuild) {
  StoreOpening a = pg_.Open();
  StoreOpening b = pg_.Open();
  ASSERT_TRUE(a.store && b.store);
  constexpr int kBuilds = 60;
  for (int i = 0; i < kBuilds; ++i) ASSERT_TRUE(PutQueued(*a.store, "b" + std::to_string(i)));
  auto drain = [](RecordStore* store, const std::string& replica, std::vector<std::string>* got) {
    for (;;) {
      const ClaimResult claimed = store->queue().ClaimQueued(replica, 2, 60);
      if (!claimed.ok() || claimed.builds.empty()) return;
      for (const ClaimedBuild& c : claimed.builds) got->push_back(c.doc);
    }
  };
  std::vector<std::string> got_a, got_b;
  std::thread ta(drain, a.store.get(), "a", &got_a);
  std::thread tb(drain, b.store.get(), "b", &got_b);
  ta.join();
  tb.join();
  std::vector<std::string> all = got_a;
  all.insert(all.end(), got_b.begin(), got_b.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kBuilds));
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a build claimed twice";
}

// Another replica's writes reach a listening store at once (LISTEN/NOTIFY, the insert
// and its notification committed together); its own writes do not come back to it,
// and a payload that is not a change (NOTIFY from anyone) is dropped.
TEST_F(PostgresStoreTest, AnotherReplicasWritesArriveOnTheChangeFeed) {
  StoreOpening writer = pg_.Open();
  StoreOpening listener = pg_.Open();
  ASSERT_TRUE(writer.store && listener.store);
  ChangeFeed* feed = listener.store->changes();
  ASSERT_NE(feed, nullptr);
  std::string error;
  const int fd = feed->Listen(&error);
  ASSERT_GE(fd, 0) << error;
  const std::string id = "b_0123456789abcdef0123456789abcdef";
  ASSERT_TRUE(listener.store->Put("b_ffffffffffffffffffffffffffffffff", "queued", "{}").ok());  // its own: not heard
  ASSERT_EQ(pg_.server().Exec(pg_.db(), "NOTIFY trtwatch_events, 'b_x 1'; NOTIFY trtwatch_records, 'drop; table'"), "");
  ASSERT_TRUE(writer.store->AppendEvents(id, {{1, "{}"}, {2, "{}"}}).ok());
  ASSERT_TRUE(writer.store->Put(id, "running", "{}").ok());
  std::vector<StoreChange> heard;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (heard.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, 100);
    std::vector<StoreChange> more;
    ASSERT_TRUE(feed->Drain(&more));
    heard.insert(heard.end(), more.begin(), more.end());
  }
  ASSERT_EQ(heard.size(), 2u);
  EXPECT_EQ(heard[0].kind, StoreChange::Kind::kEvents);
  EXPECT_EQ(heard[0].id, id);
  EXPECT_EQ(heard[0].last_seq, 2u);
  EXPECT_EQ(heard[1].kind, StoreChange::Kind::kRecord);
  EXPECT_EQ(heard[1].id, id);
  feed->Close();
  std::vector<StoreChange> none;
  EXPECT_FALSE(feed->Drain(&none)) << "closed: listen again";
}

TEST(StoreChangeTest, OnlyWellFormedPayloadsAreChanges) {
  StoreChange c;
  const std::string id = "b_0123456789abcdef0123456789abcdef";
  EXPECT_TRUE(ParseStoreChange(StoreChange::Kind::kEvents, id + " 42", &c));
  EXPECT_EQ(c.id, id);
  EXPECT_EQ(c.last_seq, 42u);
  EXPECT_TRUE(ParseStoreChange(StoreChange::Kind::kRecord, id, &c));
  for (const std::string& bad : std::vector<std::string>{"", id, id + " ", id + " -1", id + " 1x",
                                                         id + " 99999999999999999999999",
                                                         "b_0123456789ABCDEF0123456789abcdef 1", "b_x 1", id + " 1 2"}) {
    EXPECT_FALSE(ParseStoreChange(StoreChange::Kind::kEvents, bad, &c)) << bad;
  }
  EXPECT_FALSE(ParseStoreChange(StoreChange::Kind::kRecord, id + " 1", &c));
  EXPECT_FALSE(ParseStoreChange(StoreChange::Kind::kRecord, "'; DROP TABLE builds", &c));
}

}  // namespace
}  // namespace trtwatch::builds
