// BuildManager over a fake launcher (tests/support/fake_worker_launcher.h): scripted
// worker streams and ends, no processes. Each test drives the manager's io_context
// until nothing is left to do, so what it checks follows from its script alone.
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "protocol/event_json.h"
#include "builds/build_manager.h"
#include "core/clock.h"
#include "builds/metrics.h"
#include "builds/stores/record_store.h"
#include "builds/stores/sqlite_store.h"
#include "builds/executors/local_executor.h"
#include "builds/executors/slurm_executor.h"
#include "history/history_file.h"
#include "support/fake_worker_launcher.h"

namespace trtwatch::builds {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::FakeWorkerLauncher;
using testing::FakeWorkerScript;
using testing::FakeWorkerState;

// Lines of a worker's stream, numbered in order.
class Stream {
 public:
  Stream& BuildStart(const std::string& key = "") {
    Event e = Next(EventType::kBuildStart);
    e.build = "worker-made-id";
    e.backend = "simulated";
    e.model = "m";
    e.cache.key = key;
    return Add(e);
  }
  Stream& Estimate(double p10, double p50, double p90, int64_t builds) {
    Event e = Next(EventType::kEstimate);
    e.estimate.remaining = trtwatch::Estimate::Remaining{p10, p50, p90};
    e.estimate.builds = builds;
    return Add(e);
  }
  Stream& PhaseStart(int64_t id, int64_t parent, const std::string& name, int32_t total) {
    Event e = Next(EventType::kPhaseStart);
    e.id = id;
    e.parent = parent;
    e.phase = name;
    e.total = total;
    return Add(e);
  }
  Stream& PhaseFinish(int64_t id, const std::string& name, int32_t total) {
    Event e = Next(EventType::kPhaseFinish);
    e.id = id;
    e.phase = name;
    e.completed = e.total = total;
    return Add(e);
  }
  Stream& CancelRequested() {
    Event e = Next(EventType::kCancelRequested);
    e.reason = CancelReason::kSignal;
    e.message = "SIGTERM";
    return Add(e);
  }
  Stream& BuildFinish(BuildStatus status) {
    Event e = Next(EventType::kBuildFinish);
    e.status = status;
    e.elapsed = e.t;
    return Add(e);
  }
  // The stream so far as one text, cut into chunks of `size` bytes (lines split
  // across reads, as a pipe delivers them).
  std::vector<std::string> Chunks(size_t size) const {
    std::vector<std::string> out;
    for (size_t i = 0; i < text_.size(); i += size) out.push_back(text_.substr(i, size));
    return out;
  }
  std::vector<std::string> Lines() const {
    std::vector<std::string> out;
    for (size_t start = 0; start < text_.size();) {
      const size_t nl = text_.find('\n', start);
      out.push_back(text_.substr(start, nl + 1 - start));
      start = nl + 1;
    }
    return out;
  }

 private:
  Event Next(EventType type) {
    Event e;
    e.type = type;
    e.seq = ++seq_;
    e.t = 0.5 * static_cast<double>(seq_);
    return e;
  }
  Stream& Add(const Event& e) {
    text_ += EventToJson(e) + "\n";
    return *this;
  }

  uint64_t seq_ = 0;
  std::string text_;
};

class BuildManagerProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/trtwatch_manager_process_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = fs::canonical(tmpl).string();
    StoreOpening opened = SqliteStore::Open(dir_);
    store_ = std::move(opened.store);
    ASSERT_TRUE(store_) << opened.error;
  }
  void TearDown() override {
    manager_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  void Start(int max_concurrent = 2, int queue_limit = 100) {
    auto launcher = std::make_unique<FakeWorkerLauncher>(io_);
    fake_ = launcher.get();
    ManagerOptions options;
    options.data_dir = dir_;
    options.max_concurrent = max_concurrent;
    options.queue_limit = queue_limit;
    options.worker_exe = "/opt/trtwatch/bin/trtwatch";
    manager_ = std::make_unique<BuildManager>(io_, *store_, metrics_, options,
                                              std::make_unique<LocalExecutor>(io_, std::move(launcher), options.worker_exe),
                                              SteadyClock::Instance());
  }

  // Runs the event loop until nothing is left to do: every worker has ended or waits
  // silently, and no timer is pending.
  void RunIdle() {
    io_.restart();
    io_.run();
  }

  std::string Submit() {
    const SubmitResult r = manager_->Submit(R"({"simulate":"small-cnn"})");
    EXPECT_EQ(r.outcome, SubmitOutcome::kCreated) << r.error;
    return r.id;
  }
  json Record(const std::string& id) {
    const GetResult r = manager_->Get(id);
    EXPECT_EQ(r.outcome, GetOutcome::kFound) << r.error;
    return json::parse(r.record);
  }
  std::vector<json> Log(const std::string& id) {
    std::vector<json> out;
    const std::vector<StoredEvent> log = store_->EventsAfter(id, 0).value();
    for (const StoredEvent& e : log) out.push_back(json::parse(e.json));
    return out;
  }

  std::string dir_;
  boost::asio::io_context io_;
  Metrics metrics_;
  std::unique_ptr<RecordStore> store_;
  FakeWorkerLauncher* fake_ = nullptr;  // owned by manager_
  std::unique_ptr<BuildManager> manager_;
};

// docs/history.md: the record keeps the worker's last sound estimate and its build key;
// the entry the worker adds to its folder joins the store's history under the
// service's id, and the folder goes.
TEST_F(BuildManagerProcessTest, TheRecordKeepsTheEstimateAndTheKeyAndTheHistoryTheWorkersEntry) {
  Start();
  const std::string key(64, 'e');
  Stream s;
  s.BuildStart(key).Estimate(60, 70, 80, 4).Estimate(90, 50, 10, 4).BuildFinish(BuildStatus::kSucceeded);
  FakeWorkerScript script;
  script.out = s.Chunks(4096);
  fake_->Next(script);
  const std::string id = Submit();
  const std::string folder = dir_ + "/history-work/" + id;
  ASSERT_TRUE(fs::is_directory(folder)) << "seeded before the worker starts";
  history::HistoryEntry entry;  // what `trtwatch build --history` appends as it ends
  entry.build = "worker-made-id";
  entry.key = key;
  entry.backend = "simulated";
  entry.model = "simulated:small-cnn";
  entry.finished_at = history::UnixNow();
  entry.elapsed = 2;
  entry.status = BuildStatus::kSucceeded;
  ASSERT_EQ(history::HistoryFile(folder, {}).Append(entry, entry.finished_at).outcome,
            history::AppendResult::Outcome::kWritten);
  RunIdle();

  const json record = Record(id);
  ASSERT_EQ(record["status"], "succeeded") << record.dump();
  EXPECT_EQ(record["history_key"], key);
  EXPECT_EQ(record["estimate"]["remaining"], json::parse(R"({"p10":60.0,"p50":70.0,"p90":80.0})"))
      << "the second estimate is out of order: refused, the first one kept";
  EXPECT_EQ(record["estimate"]["based_on"]["builds"], 4);
  EXPECT_EQ(record["estimate"]["t"], 1.0);
  const Result<std::vector<std::string>> read = store_->History({});
  ASSERT_TRUE(read.ok()) << read.error();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ(json::parse((*read)[0])["build"], id) << "named by the service's id, not the worker's";
  EXPECT_FALSE(fs::exists(folder));
}

// The worker's entry is outside input: one that names another key than the build's
// stream said is not stored, and the build succeeds all the same.
TEST_F(BuildManagerProcessTest, AHistoryEntryOfAnotherKeyIsNotStoredAndTheBuildStands) {
  Start();
  Stream s;
  s.BuildStart(std::string(64, 'e')).BuildFinish(BuildStatus::kSucceeded);
  FakeWorkerScript script;
  script.out = s.Chunks(4096);
  fake_->Next(script);
  const std::string id = Submit();
  history::HistoryEntry entry;
  entry.build = "worker-made-id";
  entry.key = std::string(64, 'f');
  entry.model = "simulated:small-cnn";
  entry.finished_at = history::UnixNow();
  entry.status = BuildStatus::kSucceeded;
  ASSERT_EQ(history::HistoryFile(dir_ + "/history-work/" + id, {}).Append(entry, entry.finished_at).outcome,
            history::AppendResult::Outcome::kWritten);
  RunIdle();
  EXPECT_EQ(Record(id)["status"], "succeeded");
  EXPECT_TRUE(store_->History({}).value().empty());
  EXPECT_FALSE(fs::exists(dir_ + "/history-work/" + id));
}

TEST_F(BuildManagerProcessTest, AWorkerThatSucceedsGivesASucceededRecordAndTheWholeLog) {
  Start();
  Stream s;
  s.BuildStart().PhaseStart(1, kNoPhase, "Building engine", 2).PhaseFinish(1, "Building engine", 2).BuildFinish(
      BuildStatus::kSucceeded);
  FakeWorkerScript script;
  script.out = s.Chunks(37);  // lines cut across reads
  fake_->Next(script);
  const std::string id = Submit();
  RunIdle();

  ASSERT_EQ(fake_->started(), 1u);
  const WorkerSpec& spec = fake_->worker(0)->spec;
  EXPECT_EQ(spec.exe, "/opt/trtwatch/bin/trtwatch");
  ASSERT_GE(spec.argv.size(), 4u);
  EXPECT_EQ(spec.argv[0], "trtwatch");
  EXPECT_EQ(spec.argv[1], "build");
  EXPECT_EQ(spec.argv[spec.argv.size() - 4], "--progress");
  EXPECT_EQ(spec.argv[spec.argv.size() - 3], "json");
  // The worker estimates from, and adds to, a folder the service seeded from its store
  // (builds/build_history.h); the folder is gone once the build has ended.
  EXPECT_EQ(spec.argv[spec.argv.size() - 2], "--history");
  EXPECT_EQ(spec.argv.back(), dir_ + "/history-work/" + id);
  EXPECT_FALSE(fs::exists(spec.argv.back()));
  EXPECT_TRUE(fake_->worker(0)->signals.empty());
  EXPECT_FALSE(fake_->worker(0)->dropped_before_end);

  const json record = Record(id);
  EXPECT_EQ(record["status"], "succeeded") << record.dump();
  EXPECT_EQ(record["exit_code"], 0);
  EXPECT_EQ(record["events"], 4);
  EXPECT_EQ(manager_->running(), 0);
  const std::vector<json> log = Log(id);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0]["build"], id);  // the service's id, not the worker's
  EXPECT_EQ(log[3]["type"], "build_finish");
  EXPECT_EQ(log[3]["status"], "succeeded");
}

TEST_F(BuildManagerProcessTest, AWorkerThatCrashesMidStreamFailsTheBuildAndItsPhasesAreClosed) {
  Start();
  Stream s;
  s.BuildStart().PhaseStart(1, kNoPhase, "Building engine", 6).PhaseStart(2, 1, "Timing graph nodes", 83);
  FakeWorkerScript script;
  script.out = s.Lines();
  script.err = "Segmentation fault\n";
  script.exit = testing::Signalled(11, "SIGSEGV");
  fake_->Next(script);
  const std::string id = Submit();
  RunIdle();

  const json record = Record(id);
  EXPECT_EQ(record["status"], "failed");
  EXPECT_EQ(record["exit_signal"], 11);
  EXPECT_EQ(record["error"],
            "the worker was killed by signal 11 (SIGSEGV) before the build finished: Segmentation fault");
  const std::vector<json> log = Log(id);
  ASSERT_EQ(log.size(), 6u);
  // Children first, early, no earlier than the last event the worker sent.
  EXPECT_EQ(log[3]["type"], "phase_finish");
  EXPECT_EQ(log[3]["id"], 2);
  EXPECT_EQ(log[3]["early"], true);
  EXPECT_EQ(log[4]["type"], "phase_finish");
  EXPECT_EQ(log[4]["id"], 1);
  EXPECT_EQ(log[5]["type"], "build_finish");
  EXPECT_EQ(log[5]["status"], "failed");
  EXPECT_EQ(log[5]["anomalies"]["unfinished_phases"], 2);
  EXPECT_GE(log[5]["t"].get<double>(), log[2]["t"].get<double>());
  for (size_t i = 0; i < log.size(); ++i) EXPECT_EQ(log[i]["seq"], i + 1);
  EXPECT_TRUE(record["phase"]["active"].empty()) << record["phase"].dump();
}

TEST_F(BuildManagerProcessTest, CancelTerminatesTheWorkerThenKillsItAfterTheGrace) {
  Start();
  Stream s;
  s.BuildStart().PhaseStart(1, kNoPhase, "Building engine", 6);
  FakeWorkerScript script;
  script.out = s.Lines();
  script.hang = true;  // inside a long step: deaf to SIGTERM
  fake_->Next(script);
  const std::string id = Submit();
  RunIdle();  // the worker is silent and nothing else waits
  EXPECT_EQ(Record(id)["status"], "running");

  const CancelResult cancel = manager_->Cancel(id, R"({"grace": 0.2})");
  ASSERT_EQ(cancel.outcome, CancelOutcome::kCancelling) << cancel.error;
  EXPECT_EQ(json::parse(cancel.record)["status"], "cancelling");
  const FakeWorkerState& worker = *fake_->worker(0);
  ASSERT_EQ(worker.signals.size(), 1u);
  EXPECT_EQ(worker.signals[0].signal, FakeWorkerState::Signal::kTerminate);

  RunIdle();  // the grace timer, then the worker's end
  ASSERT_EQ(worker.signals.size(), 2u);
  EXPECT_EQ(worker.signals[1].signal, FakeWorkerState::Signal::kKill);
  EXPECT_GE(worker.signals[1].at - worker.signals[0].at, std::chrono::milliseconds(200));
  const json record = Record(id);
  EXPECT_EQ(record["status"], "cancelled");
  EXPECT_EQ(record["cancel"]["stop"], "forced");
  EXPECT_EQ(record["exit_signal"], 9);
  EXPECT_NE(record["error"].get<std::string>().find("forced stop"), std::string::npos);
  const std::vector<json> log = Log(id);
  ASSERT_EQ(log.size(), 4u);  // + the open phase closed, + build_finish
  EXPECT_EQ(log[3]["status"], "cancelled");
}

TEST_F(BuildManagerProcessTest, ACooperativeCancelIsNeverKilledAndTheStreamKeepsTheServicesReason) {
  Start();
  Stream s;
  s.BuildStart();
  Stream after = s;
  after.CancelRequested().BuildFinish(BuildStatus::kCancelled);
  FakeWorkerScript script;
  script.out = s.Lines();
  script.hang = true;
  script.on_terminate = FakeWorkerScript::OnTerminate::kCancel;
  const std::vector<std::string> all = after.Lines();
  script.cancel_out.assign(all.begin() + 1, all.end());
  fake_->Next(script);
  const std::string id = Submit();
  RunIdle();
  ASSERT_EQ(manager_->Cancel(id).outcome, CancelOutcome::kCancelling);
  ASSERT_EQ(manager_->Cancel(id).outcome, CancelOutcome::kCancelling);  // idempotent
  RunIdle();

  const FakeWorkerState& worker = *fake_->worker(0);
  ASSERT_EQ(worker.signals.size(), 1u);  // the second cancel sends nothing more
  EXPECT_EQ(worker.signals[0].signal, FakeWorkerState::Signal::kTerminate);
  const json record = Record(id);
  EXPECT_EQ(record["status"], "cancelled");
  EXPECT_EQ(record["cancel"]["stop"], "cooperative");
  EXPECT_EQ(record["cancel"]["reason"], "api");
  const std::vector<json> log = Log(id);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[1]["type"], "cancel_requested");
  EXPECT_EQ(log[1]["reason"], "api");
  EXPECT_EQ(log[1]["message"], record["cancel"]["message"]);
}

TEST_F(BuildManagerProcessTest, ASigtermBeforeTheWorkersHandlerIsACleanCancel) {
  Start();
  FakeWorkerScript script;
  script.hang = true;
  script.on_terminate = FakeWorkerScript::OnTerminate::kDie;
  fake_->Next(script);
  const std::string id = Submit();
  ASSERT_EQ(manager_->Cancel(id).outcome, CancelOutcome::kCancelling);
  RunIdle();
  const json record = Record(id);
  EXPECT_EQ(record["status"], "cancelled");
  EXPECT_EQ(record["cancel"]["stop"], "cooperative");
  EXPECT_EQ(record["exit_signal"], 15);
  EXPECT_EQ(fake_->worker(0)->signals.size(), 1u);
}

TEST_F(BuildManagerProcessTest, AFullQueueRefusesAndAQueuedCancelNeverStartsAWorker) {
  Start(/*max_concurrent=*/1, /*queue_limit=*/1);
  FakeWorkerScript hang;
  hang.hang = true;
  fake_->Next(hang);
  const std::string running = Submit();
  const std::string queued = Submit();
  EXPECT_EQ(Record(queued)["status"], "queued");
  const SubmitResult full = manager_->Submit(R"({"simulate":"small-cnn"})");
  EXPECT_EQ(full.outcome, SubmitOutcome::kQueueFull);
  EXPECT_TRUE(full.record.empty());
  EXPECT_NE(full.error.find("--queue-limit"), std::string::npos) << full.error;
  EXPECT_EQ(manager_->queued(), 1);

  const CancelResult cancel = manager_->Cancel(queued);
  EXPECT_EQ(cancel.outcome, CancelOutcome::kCancelled);
  EXPECT_EQ(json::parse(cancel.record)["status"], "cancelled");
  EXPECT_EQ(manager_->queued(), 0);
  RunIdle();
  EXPECT_EQ(fake_->started(), 1u);  // only the running one
  EXPECT_EQ(Record(running)["status"], "running");
}

TEST_F(BuildManagerProcessTest, CancelOfAnUnknownOrFinishedBuildSaysSo) {
  Start();
  fake_->Next(FakeWorkerScript{});  // writes nothing, exits 0
  const std::string id = Submit();
  RunIdle();
  EXPECT_EQ(Record(id)["status"], "failed");  // no build_finish: the worker's end is all there is

  const CancelResult finished = manager_->Cancel(id);
  EXPECT_EQ(finished.outcome, CancelOutcome::kAlreadyFinished);
  EXPECT_EQ(json::parse(finished.record)["status"], "failed");  // the final record comes along
  EXPECT_NE(finished.error.find("already finished (failed)"), std::string::npos) << finished.error;

  const std::string unknown = "b_00000000000000000000000000000000";
  const CancelResult none = manager_->Cancel(unknown);
  EXPECT_EQ(none.outcome, CancelOutcome::kNotFound);
  EXPECT_TRUE(none.record.empty());
  EXPECT_EQ(manager_->Get(unknown).outcome, GetOutcome::kNotFound);
  EXPECT_EQ(manager_->Cancel(id, R"({"grace": -1})").outcome, CancelOutcome::kInvalid);
  EXPECT_EQ(manager_->Submit(R"({"simulate": 3})").outcome, SubmitOutcome::kInvalid);
  EXPECT_TRUE(fake_->worker(0)->signals.empty());
}

TEST_F(BuildManagerProcessTest, AWorkerThatCannotStartFailsItsBuildWithTheReason) {
  Start();
  fake_->FailNextStart("cannot start the worker (pipe: Too many open files); the host is out of descriptors");
  const std::string id = Submit();
  const json record = Record(id);
  EXPECT_EQ(record["status"], "failed");
  EXPECT_NE(record["error"].get<std::string>().find("Too many open files"), std::string::npos);
  EXPECT_EQ(manager_->running(), 0);
}

TEST_F(BuildManagerProcessTest, RecoveryKillsALeftoverWorkerAndInterruptsItsBuild) {
  BuildRecord left;
  left.id = "b_0123456789abcdef0123456789abcdef";
  left.state = BuildState::kRunning;
  left.backend = "simulated";
  left.request_json = R"({"simulate":"small-cnn"})";
  left.created_at = left.started_at = Clock::SystemUnixSeconds();
  left.worker_pid = 4242;
  ASSERT_TRUE(store_->Put(left.id, "running", RecordToJson(left)).ok());
  Start();
  manager_->Recover();
  EXPECT_EQ(fake_->leftovers(), std::vector<int>{4242});
  EXPECT_EQ(Record(left.id)["status"], "interrupted");
}

TEST_F(BuildManagerProcessTest, KillAllForcesEveryRunningWorkerAndAManagerGoneDropsTheRest) {
  Start();
  FakeWorkerScript hang;
  hang.hang = true;
  fake_->Next(hang);
  fake_->Next(hang);
  const std::string first = Submit();
  Submit();
  RunIdle();
  manager_->KillAll();
  RunIdle();
  EXPECT_EQ(Record(first)["status"], "failed");  // a second service signal: not a cancel
  EXPECT_EQ(Record(first)["exit_signal"], 9);
  EXPECT_EQ(manager_->running(), 0);

  fake_->Next(hang);
  Submit();
  RunIdle();
  const std::shared_ptr<FakeWorkerState> last = fake_->worker(2);
  EXPECT_FALSE(last->exit);
  manager_.reset();  // a real worker is killed and reaped with its handle
  EXPECT_TRUE(last->dropped_before_end);
}

// The manager over the Slurm executor, whose sbatch and scontrol are fake processes
// printing what the test says; the job's stream is a file the test writes.
class BuildManagerSlurmTest : public BuildManagerProcessTest {
 protected:
  void StartSlurm() {
    auto launcher = std::make_unique<FakeWorkerLauncher>(io_);
    fake_ = launcher.get();
    ManagerOptions options;
    options.data_dir = dir_;
    SlurmOptions slurm;
    slurm.worker_exe = "/opt/trtwatch/bin/trtwatch";
    slurm.jobs_dir = dir_ + "/slurm";
    slurm.state_poll = std::chrono::milliseconds(5);
    slurm.tail_poll = std::chrono::milliseconds(1);
    fs::create_directories(slurm.jobs_dir);
    auto executor = std::make_unique<SlurmExecutor>(io_, std::move(launcher), slurm);
    std::string error;
    ASSERT_TRUE(executor->Prepare(&error)) << error;
    manager_ = std::make_unique<BuildManager>(io_, *store_, metrics_, options, std::move(executor),
                                              SteadyClock::Instance());
  }
  // sbatch answers job 12; scontrol then says the job ended in `state`; the job wrote
  // `stream` (the build's id known once submitted).
  std::string SubmitJobThatEnds(const std::string& state, const std::string& exit_code, const Stream& stream) {
    fake_->Next(Printing("12\n"));
    fake_->Next(Printing("JobId=12 JobState=" + state + " Reason=None NodeList=n1 ExitCode=" + exit_code + "\n"));
    const std::string id = Submit();
    std::ofstream(dir_ + "/slurm/" + id + ".events.jsonl") << stream.Chunks(1 << 20).front();
    return id;
  }
  bool RunUntilFinal(const std::string& id) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (manager_->running() > 0 || Record(id)["status"] == "running") {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
    }
    return true;
  }
  static FakeWorkerScript Printing(const std::string& out) {
    FakeWorkerScript script;
    script.out = {out};
    return script;
  }
};

// Why #24: Slurm's time limit reaches the worker as a SIGTERM, which it reports as a
// cancel; the log said "cancelled" while the record said timed_out.
TEST_F(BuildManagerSlurmTest, SlurmsTimeLimitIsWhatTheLogTheFollowersAndTheRecordSay) {
  StartSlurm();
  Stream s;
  s.BuildStart().PhaseStart(1, kNoPhase, "Building engine", 6).CancelRequested().BuildFinish(BuildStatus::kCancelled);
  const std::string id = SubmitJobThatEnds("TIMEOUT", "0:15", s);
  std::vector<std::string> followed;  // the build_finish frames a live follower got
  struct Follower final : EventSubscriber {
    std::vector<std::string>* frames;
    explicit Follower(std::vector<std::string>* into) : frames(into) {}
    void OnEvent(const FramedEvent& item) override {
      if (item.frame->find("event: build_finish") != std::string::npos) frames->push_back(*item.frame);
    }
    void OnEnd() override {}
  } follower(&followed);
  ASSERT_TRUE(manager_->Subscribe(id, &follower).live);
  ASSERT_TRUE(RunUntilFinal(id));

  const json record = Record(id);
  EXPECT_EQ(record["status"], "timed_out") << record.dump();
  EXPECT_EQ(record["reason"], "slurm_time_limit");
  EXPECT_EQ(record["job"]["state"], "TIMEOUT");
  const std::vector<json> log = Log(id);
  ASSERT_EQ(log.size(), 4u);  // one build_finish: the worker's, with Slurm's account
  EXPECT_EQ(log.back()["type"], "build_finish");
  EXPECT_EQ(log.back()["status"], "timed_out");
  EXPECT_EQ(log.back()["error"], record["error"]);
  EXPECT_EQ(log.back()["seq"], 4);
  EXPECT_EQ(record["events"], 4);
  ASSERT_EQ(followed.size(), 1u);
  EXPECT_NE(followed[0].find("\"status\":\"timed_out\""), std::string::npos) << followed[0];
  EXPECT_EQ(followed[0].find("\"cancelled\""), std::string::npos) << followed[0];
}

TEST_F(BuildManagerSlurmTest, AFailureSlurmHasNoAccountOfKeepsTheStreamsWords) {
  StartSlurm();
  Stream s;
  s.BuildStart().BuildFinish(BuildStatus::kFailed);
  const std::string id = SubmitJobThatEnds("FAILED", "1:0", s);
  ASSERT_TRUE(RunUntilFinal(id));
  const json record = Record(id);
  EXPECT_EQ(record["status"], "failed") << record.dump();
  EXPECT_TRUE(record["reason"].is_null());
  const std::vector<json> log = Log(id);
  ASSERT_EQ(log.size(), 2u);  // held for Slurm's account, then relayed as the worker wrote it
  EXPECT_EQ(log.back()["type"], "build_finish");
  EXPECT_EQ(log.back()["status"], "failed");
}

}  // namespace
}  // namespace trtwatch::builds
