// The platform's WorkerLauncher with real processes (/bin/sh): argv, env and cwd
// reach the worker, its streams and exit status come back, Terminate and Kill reach
// its whole process group, and a dropped handle leaves no process behind.
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "platform/worker_process.h"

namespace trtwatch {
namespace {

class WorkerProcessTest : public ::testing::Test {
 protected:
  std::unique_ptr<WorkerProcess> Start(const std::string& script, std::optional<std::vector<std::string>> env = {},
                                       std::string cwd = "") {
    std::string error;
    auto worker = launcher_->Start({"/bin/sh", {"sh", "-c", script}, std::move(env), std::move(cwd)}, &error);
    EXPECT_TRUE(worker) << error;
    return worker;
  }

  // Reads both streams to their end into out_ and err_.
  void ReadAll(WorkerProcess& w) {
    out_done_ = err_done_ = false;
    ReadMore(w, true);
    ReadMore(w, false);
  }
  void ReadMore(WorkerProcess& w, bool out) {
    std::array<char, 256>& chunk = out ? out_chunk_ : err_chunk_;
    auto handler = [this, &w, out](size_t n, bool closed) {
      (out ? out_ : err_).append((out ? out_chunk_ : err_chunk_).data(), n);
      if (closed) {
        (out ? out_done_ : err_done_) = true;
      } else {
        ReadMore(w, out);
      }
    };
    if (out) {
      w.ReadStdout(chunk, handler);
    } else {
      w.ReadStderr(chunk, handler);
    }
  }

  // Runs the event loop until `done`, or 20 s (a process of its own takes real time).
  bool RunUntil(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io_.restart();
      io_.run_for(std::chrono::milliseconds(10));
    }
    return true;
  }
  std::optional<WorkerExit> WaitForExit(WorkerProcess& w) {
    std::optional<WorkerExit> exit;
    RunUntil([&] { return (exit = w.Poll()).has_value(); });
    return exit;
  }

  boost::asio::io_context io_;
  std::unique_ptr<WorkerLauncher> launcher_ = NewWorkerLauncher(io_);
  std::array<char, 256> out_chunk_{}, err_chunk_{};
  std::string out_, err_;
  bool out_done_ = false, err_done_ = false;
};

TEST_F(WorkerProcessTest, ArgvEnvAndCwdReachTheWorkerAndItsStreamsAndExitComeBack) {
  const std::string cwd = std::filesystem::temp_directory_path().string();
  auto w = Start(R"(echo "$0 $GREETING $HOME"; pwd; echo oops >&2; exit 3)", std::vector<std::string>{"GREETING=hello"},
                 cwd);
  ASSERT_TRUE(w);
  EXPECT_GT(w->pid(), 0);
  ReadAll(*w);
  ASSERT_TRUE(RunUntil([&] { return out_done_ && err_done_; }));
  EXPECT_EQ(out_, "sh hello \n" + std::filesystem::canonical(cwd).string() + "\n");  // only the env given
  EXPECT_EQ(err_, "oops\n");
  const std::optional<WorkerExit> exit = WaitForExit(*w);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->code, 3);
  EXPECT_FALSE(exit->signal);
  EXPECT_EQ(w->Poll()->code, 3);  // the same answer again
}

TEST_F(WorkerProcessTest, TerminateReachesTheWholeGroup) {
  // The shell's child holds stdout open: it closes only if the child got the signal too.
  auto w = Start("sleep 60 & echo started; wait");
  ASSERT_TRUE(w);
  ReadAll(*w);
  ASSERT_TRUE(RunUntil([&] { return out_ == "started\n"; }));
  EXPECT_FALSE(w->Poll());
  w->Terminate();
  ASSERT_TRUE(RunUntil([&] { return out_done_ && err_done_; }));
  const std::optional<WorkerExit> exit = WaitForExit(*w);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGTERM);
  EXPECT_TRUE(exit->terminated);
  EXPECT_EQ(exit->signal_text, std::to_string(SIGTERM) + " (SIGTERM)");
}

TEST_F(WorkerProcessTest, KillStopsAWorkerThatIgnoresTerminate) {
  auto w = Start("trap '' TERM; echo ready; while :; do sleep 0.05; done");
  ASSERT_TRUE(w);
  ReadAll(*w);
  ASSERT_TRUE(RunUntil([&] { return out_ == "ready\n"; }));
  w->Terminate();
  io_.restart();
  io_.run_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(w->Poll());  // still running
  w->Kill();
  const std::optional<WorkerExit> exit = WaitForExit(*w);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_FALSE(exit->terminated);
  w->Kill();  // after its end: signals nothing (the pid may be someone else's)
}

TEST_F(WorkerProcessTest, ADroppedHandleLeavesNoProcessBehind) {
  auto w = Start("sleep 60");
  ASSERT_TRUE(w);
  const int pid = w->pid();
  w.reset();
  errno = 0;
  EXPECT_EQ(kill(pid, 0), -1);  // killed and reaped: not even a zombie
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(WorkerProcessTest, AProgramThatCannotRunIsAnErrorNotAWorker) {
  std::string error;
  EXPECT_FALSE(launcher_->Start({"/nonexistent/trtwatch", {"trtwatch"}, std::nullopt, ""}, &error));
  EXPECT_NE(error.find("cannot start the worker /nonexistent/trtwatch"), std::string::npos) << error;
}

TEST_F(WorkerProcessTest, ALeftoverPidIsKilledOnlyIfItIsStillAWorker) {
  // `trtwatch build` as /proc shows it: sh running the script file "build" as "trtwatch".
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("trtwatch_leftover_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "build") << "echo started; sleep 60; exit 0\n";
  std::string error;
  auto worker = launcher_->Start({"/bin/sh", {"trtwatch", "build"}, std::nullopt, dir.string()}, &error);
  ASSERT_TRUE(worker) << error;
  auto other = Start("echo started; sleep 60; exit 0");  // leads its group, but is not `trtwatch build`
  ASSERT_TRUE(other);
  for (WorkerProcess* w : {worker.get(), other.get()}) {
    out_.clear();
    ReadAll(*w);
    ASSERT_TRUE(RunUntil([&] { return out_ == "started\n"; }));
  }
  launcher_->KillLeftover(worker->pid());
  launcher_->KillLeftover(other->pid());
  std::optional<WorkerExit> exit = WaitForExit(*worker);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGKILL);
  // A SIGKILL would have ended it already; the SIGTERM that follows is what it dies of.
  other->Terminate();
  exit = WaitForExit(*other);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGTERM);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trtwatch
