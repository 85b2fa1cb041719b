// What Slurm's commands print, parsed strictly (builds/executors/slurm_job_info.h):
// their output is untrusted, so anything but the expected form is refused or bounded.
#include "builds/executors/slurm_job_info.h"

#include <gtest/gtest.h>

#include <string>

namespace trtwatch::builds {
namespace {

TEST(SlurmJobInfoTest, SbatchParsableGivesTheJobIdWithOrWithoutACluster) {
  EXPECT_EQ(ParseSbatchJobId("1234\n").id, "1234");
  EXPECT_EQ(ParseSbatchJobId("77;ci\n").id, "77");
}

TEST(SlurmJobInfoTest, AnythingElseFromSbatchIsRefusedQuotingIt) {
  for (const char* bad : {"", "\n", "Submitted batch job 12\n", "12 13\n", "-1\n", "12\n13\n",
                          "123456789012345678901\n", "1\xff\n"}) {
    const JobIdResult r = ParseSbatchJobId(bad);
    EXPECT_TRUE(r.id.empty()) << bad;
    EXPECT_NE(r.error.find("not a job id"), std::string::npos) << r.error;
  }
  const JobIdResult long_text = ParseSbatchJobId(std::string(100000, 'x'));
  EXPECT_LT(long_text.error.size(), 400u);  // bounded, whatever sbatch printed
}

constexpr const char* kRunning =
    "JobId=12 JobName=trtwatch-b_1 UserId=root(0) JobState=RUNNING Reason=None Dependency=(null) "
    "ExitCode=0:0 RunTime=00:00:01 NodeList=n2 BatchHost=n2 WorkDir=/a b/c StdOut=/x\n";

TEST(SlurmJobInfoTest, ScontrolsLineGivesStateReasonNodeAndExit) {
  const JobInfoResult r = ParseScontrolJob(kRunning, "12");
  ASSERT_TRUE(r.info) << r.error;
  EXPECT_EQ(r.info->state, "RUNNING");
  EXPECT_EQ(r.info->reason, "");  // "None": Slurm has set no reason (squeue(1), JOB REASON CODES)
  EXPECT_EQ(r.info->node, "n2");
  EXPECT_EQ(r.info->exit_code, 0);
  EXPECT_EQ(r.info->exit_signal, 0);

  const JobInfoResult pending =
      ParseScontrolJob("JobId=13 JobState=PENDING Reason=Resources NodeList=(null) ExitCode=0:0", "13");
  ASSERT_TRUE(pending.info);
  EXPECT_EQ(pending.info->reason, "Resources");
  EXPECT_EQ(pending.info->node, "");

  const JobInfoResult failed = ParseScontrolJob("JobId=14 JobState=FAILED ExitCode=143:0 NodeList=n1", "14");
  ASSERT_TRUE(failed.info);
  EXPECT_EQ(failed.info->exit_code, 143);
}

TEST(SlurmJobInfoTest, KeysAreMatchedWholeAtAFieldsStart) {
  // "ArrayJobId=" and "OldJobState=" are not the fields asked for.
  const JobInfoResult r =
      ParseScontrolJob("ArrayJobId=99 JobId=15 OldJobState=COMPLETED JobState=RUNNING NodeList=n3", "15");
  ASSERT_TRUE(r.info) << r.error;
  EXPECT_EQ(r.info->state, "RUNNING");
}

TEST(SlurmJobInfoTest, ASurprisingLineIsRefusedNotGuessed) {
  for (const char* bad : {"", "garbage", "JobId=12 JobState=running", "JobId=99 JobState=RUNNING",
                          "JobId=12 JobState=RUN;rm", "JobId=12"}) {
    const JobInfoResult r = ParseScontrolJob(bad, "12");
    EXPECT_FALSE(r.info) << bad;
    EXPECT_FALSE(r.unknown_job);
    EXPECT_FALSE(r.error.empty());
  }
  // A field with bytes no node name has is dropped, not kept.
  const JobInfoResult odd = ParseScontrolJob("JobId=12 JobState=RUNNING NodeList=n\x01", "12");
  ASSERT_TRUE(odd.info);
  EXPECT_EQ(odd.info->node, "");
}

TEST(SlurmJobInfoTest, AJobSlurmForgotIsSaidSo) {
  const JobInfoResult r = ParseScontrolJob("slurm_load_jobs error: Invalid job id specified\n", "12");
  EXPECT_TRUE(r.unknown_job);
  EXPECT_FALSE(r.info);
}

TEST(SlurmJobInfoTest, FinalStatesAreThoseThatNeverRunAgain) {
  for (const char* s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY"}) {
    EXPECT_TRUE(IsFinalSlurmState(s)) << s;
  }
  for (const char* s : {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "REQUEUED"}) {
    EXPECT_FALSE(IsFinalSlurmState(s)) << s;
  }
}

TEST(SlurmJobInfoTest, TheJobsStartFactsAreReadOnceWhole) {
  const auto facts = ParseJobStartFacts("node=n2\ncuda_visible_devices=0\nslurm_job_gpus=1\n");
  ASSERT_TRUE(facts);
  EXPECT_EQ(facts->node, "n2");
  EXPECT_EQ(facts->cuda_visible_devices, "0");
  EXPECT_EQ(facts->slurm_job_gpus, "1");
  EXPECT_FALSE(ParseJobStartFacts("node=n2\ncuda_visible"));       // still being written
  EXPECT_FALSE(ParseJobStartFacts("node=n 2\n"));                   // a space: not a node name
  EXPECT_FALSE(ParseJobStartFacts(std::string(70000, 'a') + "\n"));  // past the bound
  EXPECT_TRUE(ParseJobStartFacts("node=\ncuda_visible_devices=\nslurm_job_gpus=\n"));  // no GPU asked
}

}  // namespace
}  // namespace trtwatch::builds
