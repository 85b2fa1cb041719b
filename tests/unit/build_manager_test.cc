// BuildManager with stand-in workers (small shell scripts that behave as a worker can:
// write a long UTF-8 error, die by a signal, ignore SIGTERM, emit a few events) and a
// store whose writes can be made to fail: what the record and the log say afterwards.
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "builds/build_manager.h"
#include "builds/executors/local_executor.h"
#include "core/clock.h"
#include "builds/metrics.h"
#include "builds/stores/record_store.h"
#include "builds/stores/sqlite_store.h"
#include "protocol/utf8.h"
#include "support/faulty_sqlite_vfs.h"

namespace trtwatch::builds {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/trtwatch_manager_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = fs::canonical(tmpl).string();
  }
  void TearDown() override {
    manager_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  // A worker that runs `script` (sh) whatever arguments it gets.
  void Start(const std::string& script, const char* vfs = nullptr, int queue_limit = 100,
             size_t max_unstored_events = 100000) {
    const std::string path = dir_ + "/worker.sh";
    std::ofstream(path) << "#!/bin/sh\n" << script << "\n";
    fs::permissions(path, fs::perms::owner_all);
    StoreOpening opened = SqliteStore::Open(dir_, vfs);
    store_ = std::move(opened.store);
    ASSERT_TRUE(store_) << opened.error;
    ManagerOptions options;
    options.data_dir = dir_;
    options.worker_exe = path;
    options.queue_limit = queue_limit;
    options.max_unstored_events = max_unstored_events;
    manager_ = std::make_unique<BuildManager>(io_, *store_, metrics_, options,
                                              std::make_unique<LocalExecutor>(io_, NewWorkerLauncher(io_), path),
                                              SteadyClock::Instance());
  }

  json Record(const std::string& id) { return json::parse(manager_->Get(id).record); }

  // Runs the event loop until `done` or 20 s.
  bool RunUntil(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io_.restart();
      io_.run_for(std::chrono::milliseconds(10));
    }
    return true;
  }
  bool RunUntilStatus(const std::string& id, const std::string& status) {
    return RunUntil([&] { return Record(id)["status"] == status; });
  }

  std::string Submit() {
    SubmitResult r = manager_->Submit(R"({"simulate":"small-cnn"})");
    EXPECT_EQ(r.outcome, SubmitOutcome::kCreated) << r.error;
    return r.id;
  }

  std::string dir_;
  boost::asio::io_context io_;
  Metrics metrics_;
  testing::FaultySqliteVfs vfs_;  // outlives the store that writes through it
  std::unique_ptr<RecordStore> store_;
  std::unique_ptr<BuildManager> manager_;
};

constexpr const char* kBuildStart =
    R"(printf '{"v":1,"seq":1,"t":0,"type":"build_start","build":"w","backend":"simulated","model":"m"}\n')";

// Why #1: the error text is the tail of the worker's stderr; cut inside a character
// it once made saving the record throw and aborted the service.
TEST_F(ManagerTest, ALongUtf8ErrorCutInsideACharacterGivesAValidRecord) {
  Start(R"(printf 'é%.0s' $(seq 3000) >&2; printf 'x' >&2; exit 1)");
  const std::string id = Submit();
  ASSERT_TRUE(RunUntilStatus(id, "failed"));
  const std::string doc = *store_->Get(id).value();
  EXPECT_EQ(ValidUtf8(doc), doc);
  const json record = json::parse(doc);
  EXPECT_NE(record["error"].get<std::string>().find("éééx"), std::string::npos) << record["error"];
  EXPECT_NE(record["error"].get<std::string>().find("exited with code 1"), std::string::npos);
}

// Why: a request is parsed and checked once; the typed request it becomes is what the
// build runs and what its record keeps for other replicas, and a refused one records nothing.
TEST_F(ManagerTest, AParsedRequestIsSubmittedAsItIsAndABadOneRecordsNothing) {
  Start("exit 0");
  const Result<BuildRequest> bad = manager_->Parse(ParseJsonBody(R"({"simulate":"small-cnn","colour":"red"})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("colour"), std::string::npos) << bad.error();
  EXPECT_TRUE(store_->WithStatus({"queued", "running", "failed"}).value().empty());

  Result<BuildRequest> good = manager_->Parse(ParseJsonBody(R"({"simulate":"small-cnn","seed":7})"));
  ASSERT_TRUE(good.ok()) << good.error();
  const std::string normalised = good->json;
  const SubmitResult r = manager_->Submit(std::move(good).value());
  ASSERT_EQ(r.outcome, SubmitOutcome::kCreated) << r.error;
  ASSERT_TRUE(RunUntilStatus(r.id, "failed"));  // the worker stand-in exits without a stream
  EXPECT_EQ(Record(r.id)["request"], json::parse(normalised));
  EXPECT_EQ(Record(r.id)["request"]["seed"], 7);
}

// Why #3: the SIGTERM of a cancel can arrive before the worker handles it.
TEST_F(ManagerTest, ACancelRightAfterTheStartIsRecordedCancelled) {
  Start("exec sleep 30");
  const std::string id = Submit();
  ASSERT_EQ(manager_->Cancel(id).outcome, CancelOutcome::kCancelling);
  ASSERT_TRUE(RunUntil([&] { return manager_->running() == 0; }));
  const json record = Record(id);
  EXPECT_EQ(record["status"], "cancelled") << record.dump();
  EXPECT_EQ(record["cancel"]["reason"], "api");
  EXPECT_EQ(record["cancel"]["stop"], "cooperative");
  EXPECT_EQ(record["error"], "cancelled by POST /builds/" + id + "/cancel");
}

// Why #8: a worker that does not stop within the grace is killed, and the record and
// the stream say it was a forced stop.
TEST_F(ManagerTest, AKillAfterTheGraceIsRecordedAsAForcedStop) {
  Start(std::string("trap '' TERM; ") + kBuildStart + "; sleep 30");
  const std::string id = Submit();
  ASSERT_TRUE(RunUntil([&] { return Record(id)["events"] == 1; }));
  EXPECT_EQ(manager_->Cancel(id, R"({"grace": "5x"})").outcome, CancelOutcome::kInvalid);
  ASSERT_EQ(manager_->Cancel(id, R"({"grace": 0.2})").outcome, CancelOutcome::kCancelling);
  ASSERT_TRUE(RunUntil([&] { return manager_->running() == 0; }));
  const json record = Record(id);
  EXPECT_EQ(record["status"], "cancelled");
  EXPECT_EQ(record["cancel"]["stop"], "forced");
  EXPECT_EQ(record["cancel"]["grace_seconds"], 0.2);
  EXPECT_NE(record["error"].get<std::string>().find("forced stop"), std::string::npos);
  const std::vector<StoredEvent> log = store_->EventsAfter(id, 0).value();
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(json::parse(log.back().json)["error"], record["error"]);
}

// Why #6: a worker killed with phases open; the log closes them, after their start.
TEST_F(ManagerTest, AKilledWorkersOpenPhasesAreClosedAtTheRightTime) {
  Start(std::string(kBuildStart) +
        R"(; printf '{"v":1,"seq":2,"t":6.5,"type":"phase_start","id":1,"parent":null,"phase":"Build","total":4}\n')"
        "; kill -9 $$");
  const std::string id = Submit();
  ASSERT_TRUE(RunUntilStatus(id, "failed"));
  const std::vector<StoredEvent> log = store_->EventsAfter(id, 0).value();
  ASSERT_EQ(log.size(), 4u);
  const json finish_phase = json::parse(log[2].json);
  EXPECT_EQ(finish_phase["type"], "phase_finish");
  EXPECT_EQ(finish_phase["id"], 1);
  EXPECT_EQ(finish_phase["early"], true);
  const json finish = json::parse(log[3].json);
  EXPECT_EQ(finish["type"], "build_finish");
  EXPECT_GE(finish["t"].get<double>(), 6.5);
  EXPECT_EQ(finish["anomalies"]["unfinished_phases"], 1);
  EXPECT_NE(finish["error"].get<std::string>().find("signal 9"), std::string::npos);
}

// Why #6: --queue-limit 0 means "no waiting", not "no builds".
TEST_F(ManagerTest, QueueLimitZeroStillRunsABuildWhenASlotIsFree) {
  Start("exit 0", nullptr, /*queue_limit=*/0);
  EXPECT_EQ(manager_->Submit(R"({"simulate":"small-cnn"})").outcome, SubmitOutcome::kCreated);
  EXPECT_EQ(manager_->Submit(R"({"simulate":"small-cnn"})").outcome, SubmitOutcome::kCreated);  // max_concurrent 2
  EXPECT_EQ(manager_->Submit(R"({"simulate":"small-cnn"})").outcome, SubmitOutcome::kQueueFull);
}

// Why #4 (and issue 36): with the disk full, a build's events are kept, in order, and
// reach the store and its readers once it takes writes again; past the bound of what is
// kept the build is stopped and fails (store_unavailable), its record and its log's one
// build_finish written once space returns, and the store is unhealthy until then.
TEST_F(ManagerTest, AStorageFaultKeepsTheEventsThenFailsTheBuildPastTheBoundAndConcludesItOnceHealed) {
  testing::FaultySqliteVfs& vfs = vfs_;
  Start(std::string(kBuildStart) +
            R"(; i=2; while [ $i -lt 100000 ]; do printf '{"v":1,"seq":%d,"t":0.1,"type":"log","severity":"info","message":"m"}\n' $i; i=$((i+1)); sleep 0.01; done)",
        vfs.name(), 100, /*max_unstored_events=*/30);
  const std::string id = Submit();
  ASSERT_TRUE(RunUntil([&] { return store_->LastSeq(id).value() >= 3; }));
  EXPECT_TRUE(manager_->storage_healthy());
  vfs.FailWritesAfter(0, SQLITE_FULL);
  ASSERT_TRUE(RunUntil([&] { return manager_->running() == 0; }));
  EXPECT_GT(vfs.failed_writes(), 0);
  EXPECT_FALSE(manager_->storage_healthy());
  EXPECT_FALSE(manager_->RetryUnsaved());
  EXPECT_NE(manager_->storage_error().find("full"), std::string::npos) << manager_->storage_error();
  json record = Record(id);
  EXPECT_EQ(record["status"], "failed");
  EXPECT_EQ(record["reason"], "store_unavailable");
  EXPECT_NE(record["error"].get<std::string>().find("could not store"), std::string::npos);
  EXPECT_NE(record["error"].get<std::string>().find("--data-dir"), std::string::npos) << "SQLite: the disk's words";
  EXPECT_EQ(manager_->Submit(R"({"simulate":"small-cnn"})").outcome, SubmitOutcome::kStorageFailed);
  EXPECT_EQ(manager_->Cancel(id).outcome, CancelOutcome::kAlreadyFinished);  // concluded: nothing to cancel
  vfs.Heal();
  ASSERT_TRUE(RunUntil([&] {
    const std::optional<std::string> stored = store_->Get(id).value();
    return stored && json::parse(*stored)["status"] == "failed";
  }));
  EXPECT_TRUE(manager_->RetryUnsaved());
  EXPECT_TRUE(manager_->storage_healthy());
  // The log kept every event, in order, and ends with its one build_finish, as the record says.
  const std::vector<StoredEvent> log = store_->EventsAfter(id, 0).value();
  ASSERT_GT(log.size(), 30u);
  for (size_t i = 0; i < log.size(); ++i) EXPECT_EQ(log[i].seq, i + 1);
  size_t finishes = 0;
  for (const StoredEvent& e : log) finishes += e.json.find("\"build_finish\"") != std::string::npos;
  EXPECT_EQ(finishes, 1u);
  EXPECT_NE(log.back().json.find("\"build_finish\""), std::string::npos);
  EXPECT_NE(log.back().json.find("store"), std::string::npos) << log.back().json;
  EXPECT_EQ(json::parse(*store_->Get(id).value())["events"], log.back().seq);
}

// A worker that answers from the engine cache: its build_start and build_finish with
// `cache_fields` (the key, "cache" and a hit's times).
std::string CacheWorker(const std::string& cache_fields) {
  return R"(printf '{"v":1,"seq":1,"t":0,"type":"build_start","build":"w","backend":"tensorrt","model":"m",)" +
         cache_fields + R"(}\n'; printf '{"v":1,"seq":2,"t":0.1,"type":"build_finish","status":"succeeded",)" +
         R"("error":null,"elapsed":0.1,)" + cache_fields + R"(}\n')";
}

const std::string kCacheKey(64, 'c');

// The engine cache's answer in the worker's events is the record's `cache`, live and
// stored.
TEST_F(ManagerTest, TheWorkersEngineCacheAnswerIsTheRecordsCache) {
  Start(CacheWorker(R"("key":")" + kCacheKey + R"(","cache":"hit","cache_age_seconds":60,"cache_built_seconds":4.5)"));
  const std::string id = Submit();
  ASSERT_TRUE(RunUntilStatus(id, "succeeded"));
  const json expected = {{"state", "hit"}, {"key", kCacheKey}, {"age_seconds", 60.0}, {"built_seconds", 4.5}};
  EXPECT_EQ(Record(id)["cache"], expected);
  EXPECT_EQ(json::parse(*store_->Get(id).value())["cache"], expected);
}

// A worker's bytes are not trusted: an age no cache can have is refused, and the record
// keeps no cache answer (the event itself passed the protocol's checks and is relayed).
TEST_F(ManagerTest, AnEngineCacheAnswerNoCacheGivesIsNotKept) {
  Start(CacheWorker(R"("key":")" + kCacheKey + R"(","cache":"hit","cache_age_seconds":-60,"cache_built_seconds":4.5)"));
  const std::string id = Submit();
  ASSERT_TRUE(RunUntilStatus(id, "succeeded"));
  EXPECT_TRUE(Record(id)["cache"].is_null()) << Record(id).dump();
  EXPECT_TRUE(json::parse(*store_->Get(id).value())["cache"].is_null());
  EXPECT_EQ(store_->EventsAfter(id, 0).value().size(), 2u);
}

}  // namespace
}  // namespace trtwatch::builds
