// RecordWriter: record writes, their watchers, and the storage health built on them.
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "builds/record_writer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "builds/event_subscriber.h"
#include "builds/stores/record_store.h"
#include "builds/stores/sqlite_store.h"
#include "support/faulty_sqlite_vfs.h"

namespace trtwatch::builds {
namespace {

namespace fs = std::filesystem;

class Frames final : public RecordWatcher {
 public:
  void OnRecord(const FramedEvent& item) override { seqs.push_back(item.seq); }
  std::vector<uint64_t> seqs;
};

class RecordWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/trtwatch-record-writer-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    StoreOpening opened = SqliteStore::Open(dir_, vfs_.name());
    store_ = std::move(opened.store);
    ASSERT_TRUE(store_) << opened.error;
    writer_ = std::make_unique<RecordWriter>(io_, *store_);
  }
  void TearDown() override {
    writer_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  std::string dir_;
  boost::asio::io_context io_;
  testing::FaultySqliteVfs vfs_;  // outlives the store that writes through it
  std::unique_ptr<RecordStore> store_;
  std::unique_ptr<RecordWriter> writer_;
};

TEST_F(RecordWriterTest, AWriteIsStoredAndAnnouncedToEachWatcher) {
  ASSERT_TRUE(store_->queue().AddClaimed("b-1", R"({"id":"b-1"})", "r", 10).ok());
  ASSERT_TRUE(store_->queue().AddClaimed("b-2", "{}", "r", 10).ok());
  Frames frames;
  writer_->Watch(&frames);
  ASSERT_EQ(writer_->Put("b-1", "queued", R"({"id":"b-1"})", kFirstLeaseGeneration), PutOutcome::kStored);
  ASSERT_EQ(writer_->Put("b-1", "running", R"({"id":"b-1","status":"running"})", kFirstLeaseGeneration),
            PutOutcome::kStored);
  EXPECT_EQ(frames.seqs, (std::vector<uint64_t>{1, 2})) << "frame ids count record writes";
  EXPECT_EQ(store_->Get("b-1").value(), std::optional<std::string>(R"({"id":"b-1","status":"running"})"));
  writer_->Unwatch(&frames);
  ASSERT_EQ(writer_->Put("b-2", "queued", "{}", kFirstLeaseGeneration), PutOutcome::kStored);
  EXPECT_EQ(frames.seqs.size(), 2u);
  EXPECT_TRUE(writer_->healthy());
}

// Why (issue 36): a replica that lost a build's lease, or a second conclusion, must not
// rewrite the record: the store refuses it, nobody is told of it, nothing is retried.
TEST_F(RecordWriterTest, AWriteUnderAnotherLeaseOrAfterTheEndIsRefusedAndNeverAnnounced) {
  ASSERT_TRUE(store_->queue().AddClaimed("b-1", R"({"v":1})", "r", 10).ok());
  Frames frames;
  writer_->Watch(&frames);
  EXPECT_EQ(writer_->Put("b-1", "running", R"({"v":2})", kFirstLeaseGeneration + 1), PutOutcome::kRefused);
  ASSERT_EQ(writer_->Put("b-1", "interrupted", R"({"v":3})", kFirstLeaseGeneration), PutOutcome::kStored);
  EXPECT_EQ(writer_->Put("b-1", "interrupted", R"({"v":3})", kFirstLeaseGeneration), PutOutcome::kStored)
      << "a retry of the write that was taken";
  EXPECT_EQ(writer_->Put("b-1", "succeeded", R"({"v":4})", kFirstLeaseGeneration), PutOutcome::kRefused)
      << "the first conclusion stands";
  EXPECT_EQ(store_->Get("b-1").value(), std::optional<std::string>(R"({"v":3})"));
  EXPECT_EQ(frames.seqs.size(), 2u);
  EXPECT_TRUE(writer_->healthy());
  writer_->Unwatch(&frames);
}

// Why: a full disk must not lose a record's newest state: it is served from memory and
// written once the store takes writes again, and meanwhile the service says it is unhealthy.
TEST_F(RecordWriterTest, AFailedWriteIsKeptServedAndRetried) {
  ASSERT_TRUE(store_->queue().AddClaimed("b-1", R"({"v":1})", "r", 10).ok());
  vfs_.FailWritesAfter(0, SQLITE_FULL);
  EXPECT_EQ(writer_->Put("b-1", "running", R"({"v":2})", kFirstLeaseGeneration), PutOutcome::kKept);
  EXPECT_FALSE(writer_->healthy());
  EXPECT_NE(writer_->error().find("could not store record b-1"), std::string::npos) << writer_->error();
  EXPECT_NE(writer_->error().find("--data-dir"), std::string::npos) << "SQLite: the disk's words";
  EXPECT_EQ(writer_->Unsaved("b-1"), std::optional<std::string>(R"({"v":2})"));
  EXPECT_FALSE(writer_->RetryUnsaved());
  vfs_.Heal();
  EXPECT_TRUE(writer_->RetryUnsaved());
  EXPECT_TRUE(writer_->healthy());
  EXPECT_EQ(writer_->Unsaved("b-1"), std::nullopt);
  EXPECT_EQ(store_->Get("b-1").value(), std::optional<std::string>(R"({"v":2})"));
}

// Why: an event or queue write that failed leaves nothing to retry, yet the store is
// not healthy until a probe write passes.
TEST_F(RecordWriterTest, AnotherFailureHealsOnlyOnceTheStoreTakesWrites) {
  writer_->Failed("the service could not store the events of b-1 (disk full)");
  EXPECT_FALSE(writer_->healthy());
  vfs_.FailWritesAfter(0, SQLITE_FULL);
  EXPECT_FALSE(writer_->RetryUnsaved());
  vfs_.Heal();
  EXPECT_TRUE(writer_->RetryUnsaved());
  EXPECT_TRUE(writer_->error().empty());
}

}  // namespace
}  // namespace trtwatch::builds
