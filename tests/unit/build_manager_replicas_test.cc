// Two BuildManagers as two replicas on one PostgreSQL database (a real server,
// tests/support/postgres_server.h), each with its fake launcher
// (tests/support/fake_worker_launcher.h), on one event loop: a build submitted to one
// runs on the other, is followed and cancelled through the first, and is concluded by
// the survivor when its replica stops renewing its lease.
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "builds/build_manager.h"
#include "core/clock.h"
#include "builds/executors/local_executor.h"
#include "builds/metrics.h"
#include "builds/remote_cancel.h"
#include "builds/replica_name.h"
#include "builds/stores/postgres_store.h"
#include "protocol/event_json.h"
#include "support/fake_worker_launcher.h"
#include "support/postgres_server.h"

namespace trtwatch::builds {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::FakeWorkerLauncher;
using testing::FakeWorkerScript;
using testing::FakeWorkerState;

testing::PostgresServer* SharedServer(std::string* why) {
  static std::string skip;
  static const std::unique_ptr<testing::PostgresServer> server = testing::PostgresServer::Start(&skip);
  *why = skip;
  return server.get();
}

std::string EventLine(Event e) { return EventToJson(e) + "\n"; }

Event NumberedEvent(EventType type, uint64_t seq) {
  Event e;
  e.type = type;
  e.seq = seq;
  e.t = 0.1 * static_cast<double>(seq);
  return e;
}

// A worker that starts a phase and waits; SIGTERM makes it cancel cooperatively.
FakeWorkerScript CancellableWorker() {
  Event start = NumberedEvent(EventType::kBuildStart, 1);
  start.backend = "simulated";
  Event phase = NumberedEvent(EventType::kPhaseStart, 2);
  phase.id = 1;
  phase.parent = kNoPhase;
  phase.phase = "Building engine";
  phase.total = 6;
  Event cancel = NumberedEvent(EventType::kCancelRequested, 3);
  cancel.reason = CancelReason::kSignal;
  cancel.message = "SIGTERM";
  Event finish = NumberedEvent(EventType::kBuildFinish, 4);
  finish.status = BuildStatus::kCancelled;
  FakeWorkerScript script;
  script.out = {EventLine(start), EventLine(phase)};
  script.hang = true;
  script.on_terminate = FakeWorkerScript::OnTerminate::kCancel;
  script.cancel_out = {EventLine(cancel), EventLine(finish)};
  return script;
}

// A live reader: the seqs it was handed, and whether its stream ended.
class FollowingReader final : public EventSubscriber {
 public:
  void OnEvent(const FramedEvent& item) override { seqs.push_back(item.seq); }
  void OnEnd() override { ended = true; }
  std::vector<uint64_t> seqs;
  bool ended = false;
};

class BuildManagerReplicasTest : public ::testing::Test {
 protected:
  struct Replica {
    std::unique_ptr<RecordStore> store;
    FakeWorkerLauncher* fake = nullptr;  // owned by manager
    std::unique_ptr<BuildManager> manager;
  };

  void SetUp() override {
    std::string why;
    server_ = SharedServer(&why);
    if (!server_) GTEST_SKIP() << "PostgreSQL tests skipped: " << why;
    static int databases = 0;
    db_ = "replicas_test_" + std::to_string(++databases);
    ASSERT_EQ(server_->CreateDatabase(db_), "");
    char tmpl[] = "/tmp/trtwatch_replicas_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = fs::canonical(tmpl).string();
  }
  void TearDown() override {
    replicas_.clear();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // `io`: the event loop it runs on (default: the one RunUntil runs; a replica on a
  // loop of its own is paused while RunUntil runs).
  Replica& Add(const std::string& name, int max_concurrent, double lease_seconds = 15,
               boost::asio::io_context* io = nullptr) {
    boost::asio::io_context& loop = io ? *io : io_;
    StoreOpening opened = PostgresStore::Open(server_->Uri(db_));
    EXPECT_TRUE(opened.store) << opened.error;
    auto replica = std::make_unique<Replica>();
    replica->store = std::move(opened.store);
    auto launcher = std::make_unique<FakeWorkerLauncher>(loop);
    replica->fake = launcher.get();
    ManagerOptions options;
    options.data_dir = dir_;
    options.max_concurrent = max_concurrent;
    options.replica = name;
    options.lease_seconds = lease_seconds;
    options.worker_exe = "/opt/trtwatch/bin/trtwatch";
    auto executor = std::make_unique<LocalExecutor>(loop, std::move(launcher), options.worker_exe);
    replica->manager = std::make_unique<BuildManager>(loop, *replica->store, metrics_, options, std::move(executor),
                                                      SteadyClock::Instance());
    replicas_.push_back(std::move(replica));
    return *replicas_.back();
  }

  // Runs the event loop until `done` holds (false after 20 s).
  bool RunUntil(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io_.restart();
      io_.run_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  static json Record(Replica& r, const std::string& id) { return json::parse(r.manager->Get(id).record); }

  testing::PostgresServer* server_ = nullptr;
  std::string db_;
  std::string dir_;
  boost::asio::io_context io_;
  boost::asio::io_context paused_io_;  // a second loop: a replica on it is paused while RunUntil runs
  Metrics metrics_;
  std::vector<std::unique_ptr<Replica>> replicas_;  // destroyed before the loops they run on
};

// The drill of item 3 in small: a front replica with no slots takes the build, the
// worker replica claims and runs it; the front's reader follows it from the log, the
// front's cancel reaches the worker's SIGTERM, and both answer the same final record.
TEST_F(BuildManagerReplicasTest, ABuildSubmittedToOneReplicaRunsOnAnotherAndIsCancelledThroughTheFirst) {
  Replica& front = Add("front", /*max_concurrent=*/0);
  Replica& worker = Add("worker", 1);
  worker.fake->Next(CancellableWorker());
  const SubmitResult submitted = front.manager->Submit(R"({"simulate":"small-cnn"})");
  ASSERT_EQ(submitted.outcome, SubmitOutcome::kCreated) << submitted.error;
  const std::string id = submitted.id;
  EXPECT_EQ(json::parse(submitted.record)["status"], "queued");
  FollowingReader reader;
  const BuildManager::Subscription followed = front.manager->Subscribe(id, &reader);
  ASSERT_TRUE(followed.live);

  ASSERT_TRUE(RunUntil([&] { return reader.seqs.size() == 2; })) << "claimed and run by the worker replica";
  EXPECT_EQ(worker.fake->started(), 1u);
  EXPECT_EQ(Record(front, id)["status"], "running");

  const CancelResult cancel = front.manager->Cancel(id, R"({"grace": 30})");
  ASSERT_EQ(cancel.outcome, CancelOutcome::kCancelling) << cancel.error;
  EXPECT_EQ(json::parse(cancel.record)["status"], "cancelling");
  ASSERT_TRUE(RunUntil([&] { return reader.ended; }));
  const FakeWorkerState& w = *worker.fake->worker(0);
  ASSERT_EQ(w.signals.size(), 1u);
  EXPECT_EQ(w.signals[0].signal, FakeWorkerState::Signal::kTerminate) << "cooperative: within the grace";
  EXPECT_EQ(reader.seqs, (std::vector<uint64_t>{1, 2, 3, 4})) << "every event once, in order";
  const json final_record = Record(front, id);
  EXPECT_EQ(final_record["status"], "cancelled");
  EXPECT_EQ(final_record["cancel"]["reason"], "api");
  EXPECT_EQ(final_record, Record(worker, id));
  EXPECT_EQ(front.manager->Cancel(id).outcome, CancelOutcome::kAlreadyFinished);
}

TEST_F(BuildManagerReplicasTest, AQueuedBuildIsCancelledByAnyReplicaAndNeverRuns) {
  Replica& front = Add("front", 0);
  Replica& other = Add("other", 0);
  const std::string id = front.manager->Submit(R"({"simulate":"small-cnn"})").id;
  EXPECT_EQ(other.manager->queued(), 1);
  const CancelResult cancel = other.manager->Cancel(id);
  ASSERT_EQ(cancel.outcome, CancelOutcome::kCancelled) << cancel.error;
  EXPECT_EQ(Record(front, id)["status"], "cancelled");
  EXPECT_EQ(front.manager->queued(), 0);
  const std::vector<StoredEvent> log = front.store->EventsAfter(id, 0).value();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].json.find("\"build_finish\""), std::string::npos);
}

// A replica that dies (its manager gone without a word: no renewal, no record) leaves
// its running build to the others: once its lease lapsed, a survivor closes the open
// phase, ends the log and records it interrupted, naming the dead replica.
TEST_F(BuildManagerReplicasTest, TheBuildOfAReplicaThatStoppedRenewingIsInterruptedNamingIt) {
  Replica& doomed = Add("doomed", 1, /*lease_seconds=*/1);
  doomed.fake->Next(CancellableWorker());
  const std::string id = doomed.manager->Submit(R"({"simulate":"small-cnn"})").id;
  ASSERT_TRUE(RunUntil([&] { return Record(doomed, id)["events"] == 2; }));
  Replica& survivor = Add("survivor", 0, 1);
  ASSERT_TRUE(RunUntil([&] { return Record(survivor, id)["status"] == "running"; }));
  doomed.manager.reset();  // as kill -9 would: nothing written

  ASSERT_TRUE(RunUntil([&] { return Record(survivor, id)["status"] == "interrupted"; }));
  const json record = Record(survivor, id);
  EXPECT_NE(record["error"].get<std::string>().find("replica \"doomed\" stopped renewing its lease"),
            std::string::npos)
      << record.dump();
  const std::vector<StoredEvent> log = survivor.store->EventsAfter(id, 0).value();
  ASSERT_EQ(log.size(), 4u);  // build_start, phase_start, + phase_finish (early), build_finish
  EXPECT_NE(log[2].json.find("\"early\":true"), std::string::npos) << log[2].json;
  EXPECT_NE(log[3].json.find("\"build_finish\""), std::string::npos);
}

// Fencing: a replica paused past its lease (SIGSTOP, a VM frozen, a network cut) comes
// back to find its build concluded by another. At its next renewal it stops the worker
// and writes nothing more: the record and the log stay as the other replica wrote them.
TEST_F(BuildManagerReplicasTest, AReplicaThatLostItsLeaseStopsItsWorkerAndWritesNothingMore) {
  Replica& paused = Add("paused", 1, /*lease_seconds=*/1, &paused_io_);
  paused.fake->Next(CancellableWorker());
  const std::string id = paused.manager->Submit(R"({"simulate":"small-cnn"})").id;
  const auto run_paused_until = [&](const std::function<bool()>& done, int turns = 1000) {
    for (int i = 0; i < turns && !done(); ++i) {
      paused_io_.restart();
      paused_io_.run_for(std::chrono::milliseconds(20));
    }
    return done();
  };
  FollowingReader reader;
  ASSERT_TRUE(paused.manager->Subscribe(id, &reader).live);
  ASSERT_TRUE(run_paused_until([&] { return Record(paused, id)["events"] == 2; }));

  Replica& survivor = Add("survivor", 0, 1);  // runs on io_ while "paused" does not
  ASSERT_TRUE(RunUntil([&] { return Record(survivor, id)["status"] == "interrupted"; }));
  const json concluded = Record(survivor, id);
  const std::vector<StoredEvent> log = survivor.store->EventsAfter(id, 0).value();

  ASSERT_TRUE(run_paused_until([&] { return reader.ended; })) << "resumed: it renews, finds the build gone";
  const FakeWorkerState& w = *paused.fake->worker(0);
  ASSERT_FALSE(w.signals.empty());
  EXPECT_EQ(w.signals.back().signal, FakeWorkerState::Signal::kKill);
  run_paused_until([] { return false; }, 50);  // a second more: whatever it would still write, it had time to
  EXPECT_EQ(Record(survivor, id), concluded);
  EXPECT_EQ(survivor.store->EventsAfter(id, 0).value().size(), log.size());
  EXPECT_EQ(paused.manager->running(), 0);
}

// One ending per build (issue 36): a replica that stored its build's build_finish and
// stopped before writing the record leaves an orphan whose log has ended. The heir
// records what that build_finish says and appends nothing: never a second ending.
TEST_F(BuildManagerReplicasTest, AnOrphanWhoseLogHasEndedIsRecordedAsItsLogSaysWithNoSecondEnding) {
  StoreOpening opened = PostgresStore::Open(server_->Uri(db_));
  ASSERT_TRUE(opened.store) << opened.error;
  RecordStore& store = *opened.store;
  BuildRecord r;
  r.id = "b_ended";
  r.state = BuildState::kRunning;
  r.backend = "simulated";
  r.request_json = R"({"simulate":"small-cnn"})";
  r.created_at = Clock::SystemUnixSeconds();
  r.started_at = r.created_at;
  ASSERT_TRUE(store.queue().AddClaimed(r.id, RecordToJson(r), "gone", /*lease_seconds=*/-1).ok());
  ASSERT_TRUE(store.PutFenced(r.id, "running", RecordToJson(r), kFirstLeaseGeneration).value());
  Event start = NumberedEvent(EventType::kBuildStart, 1);
  start.backend = "simulated";
  Event finish = NumberedEvent(EventType::kBuildFinish, 2);
  finish.status = BuildStatus::kSucceeded;
  ASSERT_TRUE(store.AppendEventsFenced(r.id, {{1, EventToJson(start)}, {2, EventToJson(finish)}},
                                       kFirstLeaseGeneration, /*finish=*/true)
                  .value());

  Replica& heir = Add("heir", 0, /*lease_seconds=*/1);
  ASSERT_TRUE(RunUntil([&] { return Record(heir, r.id)["status"] != "running"; }));
  const json record = Record(heir, r.id);
  EXPECT_EQ(record["status"], "succeeded") << record.dump();
  EXPECT_EQ(record["events"], 2);
  const std::vector<StoredEvent> log = store.EventsAfter(r.id, 0).value();
  ASSERT_EQ(log.size(), 2u) << "nothing appended after the build_finish";
  EXPECT_EQ(log[1].json, EventToJson(finish));
  EXPECT_FALSE(store.PutFenced(r.id, "running", RecordToJson(r), kFirstLeaseGeneration).value())
      << "the old owner's lease is gone";
}

// Replica names reach records and errors, and come back from the database: only the
// rule's characters, bounded; the default fits the rule whatever the host is called.
TEST(ReplicaNameTest, NamesFollowTheRuleAndTheDefaultAlwaysDoes) {
  for (const std::string& ok : std::vector<std::string>{"a", "gpu-host_1.example", std::string(64, 'x')}) {
    EXPECT_EQ(ReplicaNameError(ok), "") << ok;
  }
  for (const std::string& bad :
       std::vector<std::string>{"", "two words", "a/b", "\xc3\xa9t\xc3\xa9", std::string(65, 'x'), "x\ny"}) {
    const std::string error = ReplicaNameError(bad);
    EXPECT_NE(error.find("is no replica name: give 1 to 64 letters"), std::string::npos) << error;
  }
  EXPECT_EQ(DefaultReplicaName("gpu-7.example.com", 4242), "gpu-7.example.com-4242");
  const std::string odd = DefaultReplicaName(std::string(300, 'h') + " é/", 99);
  EXPECT_EQ(ReplicaNameError(odd), "") << odd;
  EXPECT_EQ(odd.substr(odd.size() - 3), "-99");
  EXPECT_EQ(DefaultReplicaName("", 1), "trtwatch-1");
}

// A cancel left in the store for another replica is read back as untrusted text.
TEST(RemoteCancelTest, OnlyWellFormedAsksComeBackAndTheirTextsAreBounded) {
  const CancelAsk ask{2.5, "budget", "the agent's budget ran out", "ada"};
  const std::optional<CancelAsk> back = CancelAskFromJson(CancelAskToJson(ask));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->grace.value_or(-1), 2.5);
  EXPECT_EQ(back->reason, "budget");
  EXPECT_EQ(back->message, ask.message);
  EXPECT_FALSE(CancelAskFromJson(CancelAskToJson({std::nullopt, "api", "m", ""}))->grace);
  for (const char* bad : {"", "[]", "{}", R"({"reason":"signal","message":"m","grace":null})",
                          R"({"reason":"api","message":3,"grace":null})",
                          R"({"reason":"api","message":"m","grace":-1})",
                          R"({"reason":"api","message":"m","grace":"5s"})", R"({"reason":"api","message":"m"})"}) {
    EXPECT_FALSE(CancelAskFromJson(bad)) << bad;
  }
  const std::optional<CancelAsk> long_one =
      CancelAskFromJson(R"({"reason":"api","grace":null,"message":")" + std::string(10000, 'm') + "\"}");
  ASSERT_TRUE(long_one);
  EXPECT_LE(long_one->message.size(), kMaxClientText);
}

}  // namespace
}  // namespace trtwatch::builds
