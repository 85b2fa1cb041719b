// The local build history's file (history/history_file.h): what is written reads back,
// damage is skipped with a warning, a newer version is left alone, the limits hold, and
// processes appending at once lose nothing.
#include "history/history_file.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>

#include "platform/atomic_file.h"
#include "support/temp_dir_test.h"

namespace trtwatch::history {
namespace {

constexpr int64_t kDay = 86400;

HistoryEntry MakeEntry(const std::string& build, int64_t finished_at, double elapsed = 10) {
  HistoryEntry entry;
  entry.build = build;
  entry.key = "ab12";
  entry.key_parts = {{"backend", "simulated"}, {"gpu.name", "H200"}};
  entry.backend = "simulated";
  entry.model = "simulated:small-cnn";
  entry.finished_at = finished_at;
  entry.elapsed = elapsed;
  entry.status = BuildStatus::kSucceeded;
  entry.families = {{"Building engine", 1, elapsed, 1.5}};
  entry.sequence = {{"Building engine", 0, 0, elapsed, 6}};
  entry.events = {R"({"type":"build_start","v":1})"};
  return entry;
}

class HistoryFileTest : public testing::TempDirTest {
 protected:
  void AppendLine(const std::string& line) {
    std::ofstream out(dir_ + "/history.jsonl", std::ios::app);
    out << line << "\n";
  }
};

TEST_F(HistoryFileTest, AnEntryReadsBackAsItWasWritten) {
  HistoryFile file(dir_, {});
  const AppendResult appended = file.Append(MakeEntry("b_1", 1000, 12.5), 1000);
  ASSERT_EQ(appended.outcome, AppendResult::Outcome::kWritten) << appended.warning;
  const ReadResult read = file.Read();
  EXPECT_TRUE(read.warnings.empty());
  ASSERT_EQ(read.entries.size(), 1u);
  const HistoryEntry& entry = read.entries[0];
  EXPECT_EQ(entry.build, "b_1");
  EXPECT_EQ(entry.key, "ab12");
  EXPECT_EQ(entry.key_parts, (Facts{{"backend", "simulated"}, {"gpu.name", "H200"}}));
  EXPECT_DOUBLE_EQ(entry.elapsed, 12.5);
  EXPECT_EQ(entry.status, BuildStatus::kSucceeded);
  ASSERT_EQ(entry.sequence.size(), 1u);
  EXPECT_EQ(entry.sequence[0].steps, 6);
  ASSERT_EQ(entry.families.size(), 1u);
  EXPECT_DOUBLE_EQ(entry.families[0].self_seconds, 1.5);
  EXPECT_EQ(entry.events.size(), 1u);
}

TEST_F(HistoryFileTest, AMissingFileIsAnEmptyHistory) {
  const ReadResult read = HistoryFile(dir_, {}).Read();
  EXPECT_TRUE(read.entries.empty());
  EXPECT_TRUE(read.warnings.empty());
}

TEST_F(HistoryFileTest, DamagedLinesAreSkippedWithAWarningNamingTheLine) {
  HistoryFile file(dir_, {});
  ASSERT_EQ(file.Append(MakeEntry("b_1", 1000), 1000).outcome, AppendResult::Outcome::kWritten);
  AppendLine("{not json");
  AppendLine(R"({"build":"b_x","key":"NOT HEX","finished_at":1,"elapsed":1,"status":"succeeded"})");
  ASSERT_EQ(file.Append(MakeEntry("b_2", 1001), 1001).outcome, AppendResult::Outcome::kWritten);
  const ReadResult read = file.Read();
  ASSERT_EQ(read.entries.size(), 2u);
  EXPECT_EQ(read.entries[1].build, "b_2");
  ASSERT_EQ(read.warnings.size(), 2u);
  EXPECT_NE(read.warnings[0].find("history.jsonl:3: damaged entry skipped"), std::string::npos) << read.warnings[0];
  EXPECT_NE(read.warnings[1].find("key is not a lowercase hex digest"), std::string::npos) << read.warnings[1];
}

TEST_F(HistoryFileTest, ALineCutShortByACrashDoesNotSwallowTheNextEntry) {
  HistoryFile file(dir_, {});
  ASSERT_EQ(file.Append(MakeEntry("b_1", 1000), 1000).outcome, AppendResult::Outcome::kWritten);
  {
    std::ofstream out(dir_ + "/history.jsonl", std::ios::app);
    out << R"({"build":"b_cut","ke)";  // no newline: the writer died here
  }
  ASSERT_EQ(file.Append(MakeEntry("b_2", 1001), 1001).outcome, AppendResult::Outcome::kWritten);
  const ReadResult read = file.Read();
  ASSERT_EQ(read.entries.size(), 2u);
  EXPECT_EQ(read.entries[1].build, "b_2");
  EXPECT_EQ(read.warnings.size(), 1u);
}

TEST_F(HistoryFileTest, AFileFromANewerVersionIsLeftAloneWithAWarning) {
  AppendLine(R"({"trtwatch_history": 2})");
  AppendLine(R"({"something":"new"})");
  HistoryFile file(dir_, {});
  const AppendResult appended = file.Append(MakeEntry("b_1", 1000), 1000);
  EXPECT_EQ(appended.outcome, AppendResult::Outcome::kNotWritten);
  EXPECT_NE(appended.warning.find("newer trtwatch"), std::string::npos) << appended.warning;
  const ReadResult read = file.Read();
  EXPECT_TRUE(read.entries.empty());
  ASSERT_EQ(read.warnings.size(), 1u);
  std::string text;
  std::string error;
  ASSERT_TRUE(ReadWholeFile(dir_ + "/history.jsonl", &text, &error));
  EXPECT_EQ(text, "{\"trtwatch_history\": 2}\n{\"something\":\"new\"}\n");
}

TEST_F(HistoryFileTest, AnUnwritableFolderIsAWarningNotAnError) {
  std::ofstream(dir_ + "/blocker") << "a file where the history's folder would go\n";
  HistoryFile file(dir_ + "/blocker/history", {});
  const AppendResult appended = file.Append(MakeEntry("b_1", 1000), 1000);
  EXPECT_EQ(appended.outcome, AppendResult::Outcome::kNotWritten);
  EXPECT_NE(appended.warning.find("was not added to the history"), std::string::npos) << appended.warning;
}

TEST_F(HistoryFileTest, TheNewestEntriesAreKeptWhenTheCountIsExceeded) {
  HistoryFile file(dir_, HistoryLimits{8, 90});
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(file.Append(MakeEntry("b_" + std::to_string(i), 1000 + i), 1000 + i).outcome,
              AppendResult::Outcome::kWritten);
  }
  const ReadResult read = file.Read();
  EXPECT_LE(read.entries.size(), 10u);  // 8, plus a quarter before compaction runs
  EXPECT_GE(read.entries.size(), 8u);
  EXPECT_EQ(read.entries.back().build, "b_29");
  EXPECT_TRUE(read.warnings.empty());
}

TEST_F(HistoryFileTest, EntriesOlderThanTheAgeLimitGoAtTheNextAppend) {
  HistoryFile file(dir_, HistoryLimits{100, 30});
  ASSERT_EQ(file.Append(MakeEntry("b_old", 0), 0).outcome, AppendResult::Outcome::kWritten);
  ASSERT_EQ(file.Append(MakeEntry("b_recent", 20 * kDay), 20 * kDay).outcome, AppendResult::Outcome::kWritten);
  ASSERT_EQ(file.Append(MakeEntry("b_new", 40 * kDay), 40 * kDay).outcome, AppendResult::Outcome::kWritten);
  const ReadResult read = file.Read();
  ASSERT_EQ(read.entries.size(), 2u);
  EXPECT_EQ(read.entries[0].build, "b_recent");
  EXPECT_EQ(read.entries[1].build, "b_new");
}

TEST_F(HistoryFileTest, TenProcessesAppendingAtOnceLoseNothing) {
  constexpr int kProcesses = 10;
  constexpr int kEach = 20;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      HistoryFile file(dir_, {});
      int failures = 0;
      for (int i = 0; i < kEach; ++i) {
        const std::string id = "b_" + std::to_string(p) + "_" + std::to_string(i);
        if (file.Append(MakeEntry(id, 1000), 1000).outcome != AppendResult::Outcome::kWritten) ++failures;
      }
      ::_exit(failures == 0 ? 0 : 1);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const ReadResult read = HistoryFile(dir_, {}).Read();
  EXPECT_TRUE(read.warnings.empty());
  std::set<std::string> builds;
  for (const HistoryEntry& entry : read.entries) builds.insert(entry.build);
  EXPECT_EQ(builds.size(), static_cast<size_t>(kProcesses * kEach));
  EXPECT_EQ(read.entries.size(), static_cast<size_t>(kProcesses * kEach));
}

}  // namespace
}  // namespace trtwatch::history
