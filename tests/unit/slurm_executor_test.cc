// The Slurm executor (builds/executors/slurm_executor.h) over a fake launcher: what it
// asks of sbatch, scontrol and scancel, how it tails the job's stream, and how a refusal
// and Slurm's own ends reach the manager. The real cluster's drills: tests/e2e/test_slurm.py.
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "builds/executors/slurm_executor.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <algorithm>
#include <array>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "support/fake_worker_launcher.h"
#include "support/temp_dir_test.h"

namespace trtwatch::builds {
namespace {

using testing::FakeWorkerLauncher;
using testing::FakeWorkerScript;

FakeWorkerScript Prints(const std::string& out, int code = 0, const std::string& err = "") {
  FakeWorkerScript script;
  if (!out.empty()) script.out = {out};
  script.err = err;
  script.exit = testing::Exited(code);
  return script;
}

class SlurmExecutorTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto launcher = std::make_unique<FakeWorkerLauncher>(io_);
    fake_ = launcher.get();
    SlurmOptions options;
    options.partition = "gpu";
    options.account = "ml";
    options.extra_args = {"--gres=gpu:1"};
    options.worker_exe = "/opt/trtwatch/bin/trtwatch";
    options.jobs_dir = dir_;
    options.commands_dir = "/slurm/bin";
    options.state_poll = std::chrono::milliseconds(5);
    options.tail_poll = std::chrono::milliseconds(1);
    executor_ = std::make_unique<SlurmExecutor>(io_, std::move(launcher), options);
    std::string error;
    ASSERT_TRUE(executor_->Prepare(&error)) << error;
  }
  void TearDown() override {
    executor_.reset();
    TempDirTest::TearDown();
  }
  void RunFor(int ms) {
    io_.restart();
    io_.run_for(std::chrono::milliseconds(ms));
  }
  // Runs the loop until `done` holds (or 5 s, for a slow sanitizer run); returns `done()`.
  template <typename Predicate>
  bool RunUntil(Predicate done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done() && std::chrono::steady_clock::now() < deadline) RunFor(1);
    return done();
  }
  std::vector<std::string> Argv(size_t i) const { return fake_->worker(i)->spec.argv; }

  boost::asio::io_context io_;
  FakeWorkerLauncher* fake_ = nullptr;
  std::unique_ptr<SlurmExecutor> executor_;
};

TEST_F(SlurmExecutorTest, SubmitsOneBatchJobNamedByTheBuildWithItsTimeLimitAndTheConfiguredOptions) {
  fake_->Next(Prints("4242\n"));
  const WorkerTask task{"b_1f", 150.0, 10.0, {}, false};  // 2.5 min + 10 s grace: 3 minutes
  ExecutionStart start = executor_->Start(task, {"build", "--simulate", "small-cnn", "--progress", "json"});
  ASSERT_TRUE(start.execution);
  int changes = 0;
  start.execution->WatchPlace([&] { ++changes; });
  ASSERT_TRUE(RunUntil([&] { return fake_->started() >= 2; }));
  const std::vector<std::string> expected = {"/slurm/bin/sbatch",
                                             "--parsable",
                                             "--job-name=trtwatch-b_1f",
                                             "--output=" + dir_ + "/b_1f.events.jsonl",
                                             "--error=" + dir_ + "/b_1f.stderr",
                                             "--chdir=" + dir_,
                                             "--no-requeue",
                                             "--time=3",
                                             "--partition=gpu",
                                             "--account=ml",
                                             "--gres=gpu:1",
                                             dir_ + "/trtwatch-job.sh",
                                             dir_ + "/b_1f.facts",
                                             "/opt/trtwatch/bin/trtwatch",
                                             "build",
                                             "--simulate",
                                             "small-cnn",
                                             "--progress",
                                             "json"};
  EXPECT_EQ(Argv(0), expected);
  const JobPlace place = start.execution->place().job;
  EXPECT_EQ(place.executor, "slurm");
  EXPECT_EQ(place.id, "4242");
  EXPECT_EQ(place.stream, dir_ + "/b_1f.events.jsonl");
  EXPECT_GE(changes, 1);
  ASSERT_GE(fake_->started(), 2u);
  EXPECT_EQ(Argv(1), (std::vector<std::string>{"/slurm/bin/scontrol", "-o", "show", "job", "4242"}));
}

TEST_F(SlurmExecutorTest, TheServicesTimeLimitComesAfterTheOneARequestsTimeoutGives) {
  SlurmOptions options;
  options.jobs_dir = dir_;
  options.extra_args = {"--time=1"};  // --slurm-arg=--time=1: the service's cap
  SlurmExecutor executor(io_, std::make_unique<FakeWorkerLauncher>(io_), options);
  const std::vector<std::string> args = executor.SubmitArguments({"b_1", 3600.0, 10, {}, false});
  const auto derived = std::find(args.begin(), args.end(), "--time=61");
  ASSERT_NE(derived, args.end());
  // sbatch keeps an option's last value: a request's "timeout" cannot raise the cap.
  EXPECT_EQ(args.back(), "--time=1");
  EXPECT_LT(derived, args.end() - 1);
  // No "timeout": no limit of its own, only the service's (or the partition's).
  const std::vector<std::string> none = executor.SubmitArguments({"b_2", std::nullopt, 10, {}, false});
  EXPECT_EQ(std::count_if(none.begin(), none.end(), [](const std::string& a) { return a.starts_with("--time="); }), 1);
}

TEST_F(SlurmExecutorTest, ABuildThatAsksForAGpuGetsItsTypeAfterTheConfiguredOptions) {
  auto launcher = std::make_unique<FakeWorkerLauncher>(io_);
  FakeWorkerLauncher* fake = launcher.get();
  SlurmOptions options;
  options.extra_args = {"--gres=gpu:1"};
  options.jobs_dir = dir_;
  options.gpu_types = GpuTable::Parse({"h200=gres:h200,cc=9.0", "l4=feature:l4"}, "").table;
  SlurmExecutor executor(io_, std::move(launcher), options);
  std::string error;
  ASSERT_TRUE(executor.Prepare(&error)) << error;
  EXPECT_TRUE(executor.CheckGpu(GpuNeed{"", "9.0"}).accepted());
  EXPECT_NE(executor.CheckGpu(GpuNeed{"a100", ""}).error.find("this service knows h200 (9.0), l4"), std::string::npos);

  const std::vector<std::string> h200 = executor.SubmitArguments({"b_1", std::nullopt, 10, GpuNeed{"h200", ""}, false});
  ASSERT_GE(h200.size(), 2u);  // sbatch takes an option's last value: the routed type wins over --slurm-arg
  EXPECT_EQ(std::vector<std::string>(h200.end() - 2, h200.end()),
            (std::vector<std::string>{"--gres=gpu:1", "--gres=gpu:h200:1"}));
  const std::vector<std::string> l4 = executor.SubmitArguments({"b_2", std::nullopt, 10, GpuNeed{"l4", ""}, false});
  EXPECT_EQ(l4.back(), "--constraint=l4");

  // A build another replica queued for a type this one does not know is not submitted.
  const ExecutionStart refused = executor.Start({"b_3", std::nullopt, 10, GpuNeed{"a100", ""}, false}, {"build"});
  EXPECT_FALSE(refused.execution);
  EXPECT_NE(refused.error.find("no GPU type a100"), std::string::npos) << refused.error;
  EXPECT_EQ(fake->started(), 0u);
}

TEST_F(SlurmExecutorTest, FollowsTheJobsStateTailsItsStreamAndEndsWithSlurmsAccount) {
  fake_->Next(Prints("7\n"));
  fake_->Next(Prints("JobId=7 JobState=PENDING Reason=Resources NodeList=(null) ExitCode=0:0\n"));
  fake_->Next(Prints("JobId=7 JobState=RUNNING Reason=None NodeList=n2 ExitCode=0:0\n"));
  {
    std::ofstream facts(dir_ + "/b_2.facts");
    facts << "node=n2\ncuda_visible_devices=0\nslurm_job_gpus=1\n";
    std::ofstream stream(dir_ + "/b_2.events.jsonl");
    stream << "{\"v\":1}\n";
  }
  ExecutionStart start = executor_->Start({"b_2", std::nullopt, 5, {}, false}, {"build"});
  std::vector<std::string> reasons;
  start.execution->WatchPlace([&] { reasons.push_back(start.execution->place().job.pending_reason); });
  ASSERT_TRUE(RunUntil([&] { return start.execution->place().job.state == "RUNNING"; }));
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "Resources"), reasons.end());  // shown while pending
  JobPlace place = start.execution->place().job;
  EXPECT_EQ(place.pending_reason, "");
  EXPECT_EQ(place.node, "n2");
  EXPECT_EQ(place.cuda_visible_devices, "0");
  EXPECT_EQ(place.slurm_job_gpus, "1");

  std::array<char, 64> buffer{};
  std::string read;
  bool closed = false;
  std::function<void()> read_more = [&] {
    start.execution->ReadEvents(buffer, [&](size_t n, bool end) {
      read.append(buffer.data(), n);
      closed = end;
      if (!end) read_more();
    });
  };
  read_more();
  ASSERT_TRUE(RunUntil([&] { return !read.empty(); }));
  EXPECT_EQ(read, "{\"v\":1}\n");
  EXPECT_FALSE(closed);  // the job still runs
  EXPECT_FALSE(start.execution->Poll());

  fake_->Next(Prints("JobId=7 JobState=NODE_FAIL Reason=NodeDown NodeList=n2 ExitCode=0:0\n"));
  EXPECT_TRUE(RunUntil([&] { return closed; }));
  ASSERT_TRUE(start.execution->Poll());
  // Slurm's 0:0 for a job lost with its node: killed (SIGKILL), never an exit with code 0.
  EXPECT_FALSE(start.execution->Poll()->code);
  EXPECT_EQ(start.execution->Poll()->signal, 9);
  const std::optional<EndVerdict> verdict = start.execution->Judge({false, BuildState::kFailed, false});
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->reason, "slurm_node_fail");
  EXPECT_EQ(verdict->state, BuildState::kFailed);
}

TEST_F(SlurmExecutorTest, TheJobsFirstEventShowsItRunningBeforeScontrolIsAskedAgain) {
  fake_->Next(Prints("8\n"));
  fake_->Next(Prints("JobId=8 JobState=PENDING Reason=Priority NodeList=(null) ExitCode=0:0\n"));
  ExecutionStart start = executor_->Start({"b_6", std::nullopt, 5, {}, false}, {"build"});
  ASSERT_TRUE(RunUntil([&] { return start.execution->place().job.pending_reason == "Priority"; }));
  {  // the job script writes its facts, then trtwatch its first event
    std::ofstream facts(dir_ + "/b_6.facts");
    facts << "node=n3\ncuda_visible_devices=0\nslurm_job_gpus=1\n";
    std::ofstream stream(dir_ + "/b_6.events.jsonl");
    stream << "{\"v\":1}\n";
  }
  std::array<char, 64> buffer{};
  size_t read = 0;
  start.execution->ReadEvents(buffer, [&](size_t n, bool) { read = n; });
  ASSERT_TRUE(RunUntil([&] { return read > 0; }));
  const JobPlace place = start.execution->place().job;
  EXPECT_EQ(place.state, "RUNNING");  // scontrol has answered nothing since PENDING
  EXPECT_EQ(place.pending_reason, "");
  EXPECT_EQ(place.node, "n3");
  EXPECT_EQ(place.slurm_job_gpus, "1");
}

TEST_F(SlurmExecutorTest, StopsCooperativelyWithScancelFullThenByForce) {
  fake_->Next(Prints("9\n"));
  fake_->Next(Prints("JobId=9 JobState=RUNNING Reason=None NodeList=n1 ExitCode=0:0\n"));
  ExecutionStart start = executor_->Start({"b_3", std::nullopt, 5, {}, false}, {"build"});
  ASSERT_TRUE(RunUntil([&] { return start.execution->place().job.state == "RUNNING"; }));
  const size_t before = fake_->started();
  start.execution->RequestStop();
  start.execution->ForceStop();
  bool asked = false;
  bool forced = false;
  for (size_t i = before; i < fake_->started(); ++i) {
    asked |= Argv(i) == std::vector<std::string>{"/slurm/bin/scancel", "--full", "--signal=TERM", "9"};
    forced |= Argv(i) == std::vector<std::string>{"/slurm/bin/scancel", "9"};
  }
  EXPECT_TRUE(asked);
  EXPECT_TRUE(forced);
}

TEST_F(SlurmExecutorTest, AJobKilledByTheStopsSigtermBeforeTrtwatchHandlesItObeyedTheStop) {
  fake_->Next(Prints("10\n"));
  fake_->Next(Prints("JobId=10 JobState=RUNNING Reason=None NodeList=n1 ExitCode=0:0\n"));
  ExecutionStart start = executor_->Start({"b_7", std::nullopt, 5, {}, false}, {"build"});
  ASSERT_TRUE(RunUntil([&] { return start.execution->place().job.state == "RUNNING"; }));
  fake_->Next(Prints(""));  // scancel --full --signal=TERM
  start.execution->RequestStop();
  // The worker had not yet installed its handler: SIGTERM ended it, and Slurm says FAILED.
  fake_->Next(Prints("JobId=10 JobState=FAILED Reason=NonZeroExitCode NodeList=n1 ExitCode=0:15\n"));
  ASSERT_TRUE(RunUntil([&] { return start.execution->Poll().has_value(); }));
  EXPECT_TRUE(start.execution->Poll()->terminated);  // the manager records it cancelled, as asked
}

TEST_F(SlurmExecutorTest, AStopAskedBeforeSbatchAnswersIsAppliedToTheJob) {
  fake_->Next(Prints("11\n"));
  ExecutionStart start = executor_->Start({"b_4", std::nullopt, 5, {}, false}, {"build"});
  start.execution->ForceStop();  // sbatch has not answered yet
  ASSERT_TRUE(RunUntil([&] { return fake_->started() >= 2; }));
  EXPECT_EQ(Argv(1), (std::vector<std::string>{"/slurm/bin/scancel", "11"}));
}

TEST_F(SlurmExecutorTest, ARefusedSubmissionEndsTheBuildWithSbatchsReason) {
  fake_->Next(Prints("", 1, "sbatch: error: Batch job submission failed: Requested node configuration is not "
                            "available\n"));
  ExecutionStart start = executor_->Start({"b_5", std::nullopt, 5, {}, false}, {"build"});
  ASSERT_TRUE(RunUntil([&] { return start.execution->Poll().has_value(); }));
  ASSERT_TRUE(start.execution->Poll());
  const std::optional<EndVerdict> verdict = start.execution->Judge({false, BuildState::kFailed, false});
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->reason, "slurm_refused");
  EXPECT_NE(verdict->error.find("Requested node configuration is not available"), std::string::npos)
      << verdict->error;
  EXPECT_EQ(fake_->started(), 1u);  // nothing to follow
}

TEST_F(SlurmExecutorTest, ReattachesOnlyToItsOwnJobsAndStreams) {
  JobPlace job;
  job.executor = "slurm";
  job.id = "77";
  job.stream = dir_ + "/b_6.events.jsonl";
  EXPECT_TRUE(executor_->Reattach({0, job}));
  JobPlace elsewhere = job;
  elsewhere.stream = "/etc/passwd";
  EXPECT_FALSE(executor_->Reattach({0, elsewhere}));
  JobPlace climbing = job;
  climbing.stream = dir_ + "/../x.events.jsonl";
  EXPECT_FALSE(executor_->Reattach({0, climbing}));
  JobPlace bad_id = job;
  bad_id.id = "77;rm";
  EXPECT_FALSE(executor_->Reattach({0, bad_id}));
  EXPECT_FALSE(executor_->Reattach({1234, {}}));  // a local worker's place
}

}  // namespace
}  // namespace trtwatch::builds
