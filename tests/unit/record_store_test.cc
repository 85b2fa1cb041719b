#include "builds/record_store.h"
#include "builds/sqlite_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "builds/build_record.h"
#include "builds/retention.h"
#include "support/faulty_sqlite_vfs.h"

namespace trtwatch::builds {
namespace {

class RecordStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/trtwatch_store_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<RecordStore> Open() {
    std::string error;
    auto store = SqliteStore::Open(dir_, &error);
    EXPECT_TRUE(store) << error;
    return store;
  }
  std::string dir_;
};

TEST_F(RecordStoreTest, PutGetAndUpdateKeepCreationOrder) {
  auto store = Open();
  ASSERT_TRUE(store->Put("a", "queued", "{\"id\":\"a\"}"));
  ASSERT_TRUE(store->Put("b", "running", "{\"id\":\"b\"}"));
  ASSERT_TRUE(store->Put("a", "succeeded", "{\"id\":\"a\",\"v\":2}"));
  EXPECT_EQ(store->Get("a"), "{\"id\":\"a\",\"v\":2}");
  EXPECT_FALSE(store->Get("zz"));
  auto page = store->List({}, 10, 0);
  ASSERT_EQ(page.docs.size(), 2u);
  EXPECT_EQ(page.docs[0], "{\"id\":\"b\"}");  // newest first, the update did not reorder
  EXPECT_FALSE(page.next_cursor);
}

TEST_F(RecordStoreTest, PaginatesAndFilters) {
  auto store = Open();
  for (int i = 0; i < 5; ++i) {
    store->Put("id" + std::to_string(i), i % 2 ? "failed" : "succeeded", std::to_string(i));
  }
  auto first = store->List({}, 2, 0);
  EXPECT_EQ(first.docs, (std::vector<std::string>{"4", "3"}));
  ASSERT_TRUE(first.next_cursor);
  auto second = store->List({}, 2, *first.next_cursor);
  EXPECT_EQ(second.docs, (std::vector<std::string>{"2", "1"}));
  auto third = store->List({}, 2, *second.next_cursor);
  EXPECT_EQ(third.docs, (std::vector<std::string>{"0"}));
  EXPECT_FALSE(third.next_cursor);
  EXPECT_EQ(store->List({"failed"}, 10, 0).docs, (std::vector<std::string>{"3", "1"}));
  EXPECT_EQ(store->WithStatus({"succeeded"}), (std::vector<std::string>{"0", "2", "4"}));
}

TEST_F(RecordStoreTest, EventLogSurvivesReopenAndReplaysAfterASeq) {
  {
    auto store = Open();
    ASSERT_TRUE(store->AppendEvents("a", {{1, "e1"}, {2, "e2"}}));
    ASSERT_TRUE(store->AppendEvents("a", {{3, "e3"}}));
    ASSERT_TRUE(store->AppendEvents("b", {{1, "other"}}));
    ASSERT_TRUE(store->Put("a", "running", "{}"));
  }
  auto store = Open();
  EXPECT_EQ(store->LastSeq("a"), 3u);
  auto after = store->EventsAfter("a", 1);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].seq, 2u);
  EXPECT_EQ(after[0].json, "e2");
  EXPECT_EQ(after[1].json, "e3");
  EXPECT_TRUE(store->EventsAfter("a", 3).empty());
  EXPECT_EQ(store->Get("a"), "{}");
}

TEST_F(RecordStoreTest, RefusesAFileThatIsNotADatabase) {
  {
    FILE* f = std::fopen((dir_ + "/trtwatch.db").c_str(), "w");
    std::fputs("this is not sqlite, just text long enough to have a header.........................", f);
    std::fclose(f);
  }
  std::string error;
  EXPECT_FALSE(SqliteStore::Open(dir_, &error));
  EXPECT_NE(error.find("--data-dir"), std::string::npos) << error;
}

TEST_F(RecordStoreTest, CreatesAPrivateDataDirOrSaysWhyNot) {
  std::string error;
  const std::string data = dir_ + "/data";
  ASSERT_TRUE(SqliteStore::Open(data, &error)) << error;
  EXPECT_EQ(std::filesystem::status(data).permissions(), std::filesystem::perms::owner_all);
  EXPECT_TRUE(SqliteStore::Open(data, &error)) << "an existing data dir is reused: " << error;

  EXPECT_FALSE(SqliteStore::Open(dir_ + "/missing/data", &error));
  EXPECT_EQ(error, "cannot create --data-dir \"" + dir_ + "/missing/data\": No such file or directory");
  std::ofstream(dir_ + "/file") << "x";
  EXPECT_FALSE(SqliteStore::Open(dir_ + "/file", &error));
  EXPECT_EQ(error, "cannot create --data-dir \"" + dir_ + "/file\": File exists");
}

// Issue 22: a second service on one data dir once recovered (SIGKILLed) the first
// one's workers. The embedded store admits one process: a second Open is refused
// with the dir and the holder's PID, and the data dir is free again once the store
// is gone.
TEST_F(RecordStoreTest, OneStorePerDataDirTheSecondIsRefusedWithTheHoldersPid) {
  auto first = Open();
  ASSERT_TRUE(first);
  std::string error;
  EXPECT_FALSE(SqliteStore::Open(dir_, &error));
  EXPECT_NE(error.find("\"" + dir_ + "\""), std::string::npos) << error;
  EXPECT_NE(error.find("PID " + std::to_string(::getpid())), std::string::npos) << error;
  first.reset();
  EXPECT_TRUE(SqliteStore::Open(dir_, &error)) << error;
}

// Issue 22: records hold model paths and errors. The data dir is narrowed to 0700 and
// the database with its -wal and -shm to 0600, whatever the umask and however the dir
// was made (mkdir -p gives 0755).
TEST_F(RecordStoreTest, TheDataDirAndTheDatabaseFilesAreThisUsersOnly) {
  const std::string data = dir_ + "/data";
  const mode_t old_umask = ::umask(022);
  ASSERT_EQ(::mkdir(data.c_str(), 0755), 0);
  std::string error;
  auto store = SqliteStore::Open(data, &error);
  ::umask(old_umask);
  ASSERT_TRUE(store) << error;
  ASSERT_TRUE(store->Put("a", "queued", "{}"));
  namespace fs = std::filesystem;
  EXPECT_EQ(fs::status(data).permissions(), fs::perms::owner_all);
  for (const char* name : {"/trtwatch.db", "/trtwatch.db-wal", "/trtwatch.db-shm", "/trtwatch.lock"}) {
    EXPECT_EQ(fs::status(data + name).permissions(), fs::perms::owner_read | fs::perms::owner_write) << name;
  }
}

TEST_F(RecordStoreTest, RetentionPrunesOnlyFinishedBuildsWithTheirLogsAndEngines) {
  auto store = Open();
  std::filesystem::create_directories(dir_ + "/engines");
  auto put = [&](const std::string& id, BuildState state, double finished_at) {
    BuildRecord r;
    r.id = id;
    r.state = state;
    r.created_at = finished_at - 10;
    r.finished_at = IsFinal(state) ? finished_at : 0;
    ASSERT_TRUE(store->Put(id, std::string(BuildStateName(state)), RecordToJson(r)));
    ASSERT_TRUE(store->AppendEvents(id, {{1, "{}"}, {2, "{}"}}));
    std::ofstream(dir_ + "/engines/" + id + ".engine") << "engine";
  };
  const double now = 1764500000;
  put("old_done", BuildState::kSucceeded, now - 3 * 86400);
  put("old_running", BuildState::kRunning, now - 3 * 86400);
  put("mid_failed", BuildState::kFailed, now - 2 * 86400);
  put("new_done", BuildState::kCancelled, now - 60);

  // By age: finished more than a day ago. A running build is never pruned.
  PruneReport r = PruneFinishedBuilds(*store, {86400, 0}, now, dir_ + "/engines");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.removed, 2u);
  EXPECT_FALSE(store->Get("old_done"));
  EXPECT_FALSE(store->Get("mid_failed"));
  EXPECT_TRUE(store->EventsAfter("old_done", 0).empty());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/engines/old_done.engine"));
  EXPECT_TRUE(store->Get("old_running"));
  EXPECT_EQ(store->EventsAfter("old_running", 0).size(), 2u);
  EXPECT_TRUE(store->Get("new_done"));

  // By count: the newest finished one stays, whatever its age.
  put("newest_done", BuildState::kSucceeded, now - 30);
  r = PruneFinishedBuilds(*store, {0, 1}, now, dir_ + "/engines");
  EXPECT_EQ(r.removed, 1u);
  EXPECT_FALSE(store->Get("new_done"));
  EXPECT_TRUE(store->Get("newest_done"));
  EXPECT_TRUE(store->Get("old_running"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/engines/newest_done.engine"));
  EXPECT_EQ(PruneFinishedBuilds(*store, {}, now, dir_ + "/engines").removed, 0u);  // no policy: nothing
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
    std::vector<StoredEvent> events;
    for (uint64_t i = 1; i <= 3000; ++i) events.push_back({i, "{\"seq\":" + std::to_string(i) + ",\"pad\":\"xxxxxxxx\"}"});
    ASSERT_TRUE(store->AppendEvents("b", events));
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
  std::string error;
  EXPECT_FALSE(SqliteStore::Open(dir_, &error));
  EXPECT_NE(error.find("is damaged"), std::string::npos) << error;
  EXPECT_NE(error.find("move it"), std::string::npos) << error;
}

// Why #4: every write reports a full disk, and the store works again afterwards
// (a failed COMMIT must not leave the transaction open).
TEST_F(RecordStoreTest, WriteFailuresAreReportedAndTheStoreRecovers) {
  testing::FaultySqliteVfs vfs;
  std::string error;
  auto store = SqliteStore::Open(dir_, &error, vfs.name());
  ASSERT_TRUE(store) << error;
  ASSERT_TRUE(store->AppendEvents("b", {{1, "{}"}}));
  for (int allowed : {0, 1}) {
    vfs.FailWritesAfter(allowed, SQLITE_FULL);
    EXPECT_FALSE(store->AppendEvents("b", {{2, "{}"}, {3, "{}"}})) << allowed;
    EXPECT_FALSE(store->last_error().empty());
    EXPECT_FALSE(store->Probe());
    vfs.Heal();
  }
  vfs.FailWritesAfter(0, SQLITE_IOERR_WRITE);
  EXPECT_FALSE(store->Put("b", "running", "{}"));
  vfs.Heal();
  EXPECT_TRUE(store->Probe());
  ASSERT_TRUE(store->AppendEvents("b", {{2, "{}"}, {3, "{}"}}));
  EXPECT_EQ(store->LastSeq("b"), 3u);
  EXPECT_TRUE(store->Put("b", "failed", "{}"));
}

}  // namespace
}  // namespace trtwatch::builds
