// How a build that ran as a Slurm job ended (builds/executors/slurm_outcome.h): each of
// Slurm's own ends is its own status and reason, never a success nor a generic failure.
#include "builds/executors/slurm_outcome.h"

#include <gtest/gtest.h>

#include <string>

namespace trtwatch::builds {
namespace {

JobEnd Ended(const std::string& state, bool finished = false, BuildState stream = BuildState::kFailed,
             bool asked = false) {
  return {state, finished, stream, asked};
}

TEST(SlurmOutcomeTest, EachOfSlurmsOwnEndsIsADistinctReasonNamingItsState) {
  struct Case {
    const char* state;
    BuildState status;
    const char* reason;
  };
  for (const Case& c : {Case{"NODE_FAIL", BuildState::kFailed, "slurm_node_fail"},
                        Case{"PREEMPTED", BuildState::kInterrupted, "slurm_preempted"},
                        Case{"TIMEOUT", BuildState::kTimedOut, "slurm_time_limit"},
                        Case{"OUT_OF_MEMORY", BuildState::kFailed, "slurm_out_of_memory"},
                        Case{"CANCELLED", BuildState::kCancelled, "slurm_cancelled"},
                        Case{"BOOT_FAIL", BuildState::kFailed, "slurm_failed"}}) {
    const JobVerdict v = JudgeJobEnd(Ended(c.state), "42");
    ASSERT_TRUE(v.applies) << c.state;
    EXPECT_EQ(v.state, c.status) << c.state;
    EXPECT_EQ(v.reason, c.reason);
    EXPECT_NE(v.error.find(std::string("Slurm job 42 ended ") + c.state), std::string::npos) << v.error;
  }
}

TEST(SlurmOutcomeTest, SlurmsEndWinsOverTheCancelTheWorkerReportedForItsSignal) {
  // Slurm's time limit and an outside scancel reach the worker as SIGTERM: its stream
  // says cancelled, Slurm says what it was.
  const JobVerdict limit = JudgeJobEnd(Ended("TIMEOUT", true, BuildState::kCancelled), "7");
  EXPECT_EQ(limit.state, BuildState::kTimedOut);
  EXPECT_EQ(limit.reason, "slurm_time_limit");
  // The limit may be the service's --slurm-arg=--time, not the request's timeout: it names both.
  EXPECT_NE(limit.error.find("the request's \"timeout\" plus the cancel grace, or --slurm-arg=--time"),
            std::string::npos) << limit.error;
  const JobVerdict outside = JudgeJobEnd(Ended("CANCELLED", true, BuildState::kCancelled), "7");
  EXPECT_EQ(outside.state, BuildState::kCancelled);
  EXPECT_EQ(outside.reason, "slurm_cancelled");
  EXPECT_NE(outside.error.find("outside trtwatch"), std::string::npos);
}

TEST(SlurmOutcomeTest, ACancelTrtwatchAskedIsLeftToTheStreamAndTheManager) {
  EXPECT_FALSE(JudgeJobEnd(Ended("CANCELLED", false, BuildState::kFailed, true), "7").applies);
  EXPECT_FALSE(JudgeJobEnd(Ended("FAILED", true, BuildState::kCancelled, true), "7").applies);
}

TEST(SlurmOutcomeTest, OrdinaryEndsAreTheStreamsAccount) {
  EXPECT_FALSE(JudgeJobEnd(Ended("COMPLETED", true, BuildState::kSucceeded), "7").applies);
  EXPECT_FALSE(JudgeJobEnd(Ended("FAILED", true, BuildState::kFailed), "7").applies);
  EXPECT_FALSE(JudgeJobEnd(Ended("FAILED"), "7").applies);  // the exit code and stderr tell the error
  EXPECT_FALSE(JudgeJobEnd(Ended(""), "7").applies);        // purged: what the stream says
}

TEST(SlurmOutcomeTest, ABuildThatReportedSuccessStaysASuccess) {
  // Its engine is written; Slurm's end raced the worker's exit.
  for (const char* state : {"NODE_FAIL", "TIMEOUT", "CANCELLED", "OUT_OF_MEMORY"}) {
    EXPECT_FALSE(JudgeJobEnd(Ended(state, true, BuildState::kSucceeded), "7").applies) << state;
  }
}

TEST(SlurmOutcomeTest, TheExitFieldsSayWhatSlurmSawAndNeverAnExitCodeZeroForAKill) {
  // sacct(1), JOB EXIT CODES: ExitCode is "code:signal"; the signal that ended the process follows the colon.
  const WorkerExit lost = SlurmJobExit("NODE_FAIL", 0, 0);  // Slurm's 0:0 for a job whose node it lost
  EXPECT_FALSE(lost.code);
  ASSERT_TRUE(lost.signal);
  EXPECT_EQ(*lost.signal, 9);
  EXPECT_EQ(lost.signal_text, "9 (SIGKILL)");
  const WorkerExit killed = SlurmJobExit("FAILED", 0, 9);
  EXPECT_FALSE(killed.code);
  EXPECT_EQ(killed.signal, 9);
  const WorkerExit terminated = SlurmJobExit("CANCELLED", 0, 15);
  EXPECT_FALSE(terminated.code);
  EXPECT_EQ(terminated.signal, 15);
  EXPECT_EQ(terminated.signal_text, "15");
  // An end of Slurm's own with 0:0: no exit Slurm saw, so neither field.
  for (const char* state : {"CANCELLED", "TIMEOUT", "PREEMPTED", "OUT_OF_MEMORY"}) {
    const WorkerExit unknown = SlurmJobExit(state, 0, 0);
    EXPECT_FALSE(unknown.code) << state;
    EXPECT_FALSE(unknown.signal) << state;
  }
  // Exits the worker made itself keep their code.
  EXPECT_EQ(SlurmJobExit("COMPLETED", 0, 0).code, 0);
  EXPECT_EQ(SlurmJobExit("FAILED", 3, 0).code, 3);
  EXPECT_EQ(SlurmJobExit("CANCELLED", 130, 0).code, 130);
  EXPECT_FALSE(SlurmJobExit("COMPLETED", 0, 0).signal);
  const WorkerExit none = SlurmJobExit("RUNNING", std::nullopt, std::nullopt);  // no ExitCode parsed
  EXPECT_FALSE(none.code);
  EXPECT_FALSE(none.signal);
}

}  // namespace
}  // namespace trtwatch::builds
