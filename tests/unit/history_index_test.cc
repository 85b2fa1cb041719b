// The history's index (history/history_index.h) as HistoryFile uses it: a build reads
// only what its estimate may use and gets what reading every entry would give; the
// listing reads summaries; a file of an earlier trtwatch is indexed transparently;
// lines appended without the index, damage, a rewritten file and a damaged index are
// all read right; the bounds hold; processes appending at once keep the index whole.
#include "history/history_index.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>

#include "history/estimator.h"
#include "history/history_file.h"
#include "platform/atomic_file.h"
#include "platform/file_lock.h"
#include "support/temp_dir_test.h"

namespace trtwatch::history {
namespace {

constexpr char kKeyA[] = "aa01";
constexpr char kKeyB[] = "bb02";

HistoryEntry MakeEntry(const std::string& build, const std::string& key, const std::string& gpu, int64_t finished_at,
                       BuildStatus status = BuildStatus::kSucceeded) {
  HistoryEntry entry;
  entry.build = build;
  entry.key = key;
  entry.key_parts = {{"backend", "simulated"}, {"model", key == kKeyB ? "other" : "cnn"}, {"gpu.name", gpu}};
  entry.backend = "simulated";
  entry.model = "simulated:small-cnn";
  entry.finished_at = finished_at;
  entry.elapsed = 10;
  entry.status = status;
  entry.families = {{"Building engine", 1, 10, 1.5}};
  entry.sequence = {{"Building engine", 0, 0, 10, 6}};
  entry.events = {R"({"type":"build_start","v":1})"};
  return entry;
}

std::set<std::string> Builds(const std::vector<HistoryEntry>& entries) {
  std::set<std::string> builds;
  for (const HistoryEntry& entry : entries) builds.insert(entry.build);
  return builds;
}

class HistoryIndexTest : public testing::TempDirTest {
 protected:
  // As an earlier trtwatch (or a person) would write it: no index.
  void AppendLine(const std::string& line) {
    std::ofstream out(dir_ + "/history.jsonl", std::ios::app);
    out << line << "\n";
  }
  bool HasIndex() const { return std::ifstream(dir_ + "/history.idx").good(); }
};

TEST_F(HistoryIndexTest, ABuildReadsOnlyItsKeysSuccessfulBuildsWithTheirSequences) {
  HistoryFile file(dir_, {});
  ASSERT_EQ(file.Append(MakeEntry("b_a1", kKeyA, "H200", 100), 100).outcome, AppendResult::Outcome::kWritten);
  ASSERT_EQ(file.Append(MakeEntry("b_b1", kKeyB, "H200", 101), 101).outcome, AppendResult::Outcome::kWritten);
  ASSERT_EQ(file.Append(MakeEntry("b_a2", kKeyA, "H200", 102, BuildStatus::kFailed), 102).outcome,
            AppendResult::Outcome::kWritten);
  ASSERT_EQ(file.Append(MakeEntry("b_a3", kKeyA, "H200", 103), 103).outcome, AppendResult::Outcome::kWritten);
  EXPECT_TRUE(HasIndex());

  const ReadResult read = file.ReadForEstimate(kKeyA, MakeEntry("", kKeyA, "H200", 0).key_parts, 20);
  EXPECT_TRUE(read.warnings.empty());
  EXPECT_EQ(Builds(read.entries), (std::set<std::string>{"b_a1", "b_a3"}));
  ASSERT_EQ(read.entries.size(), 2u);
  EXPECT_EQ(read.entries[0].build, "b_a1");  // oldest first, as Read gives them
  EXPECT_EQ(read.entries[1].sequence.size(), 1u);  // what the estimate aligns with
  EXPECT_TRUE(read.entries[1].events.empty());      // not read: the estimate does not use it
}

TEST_F(HistoryIndexTest, TheEstimateIsTheSameAsFromEveryEntryForExactAndSimilarKeys) {
  HistoryFile file(dir_, {});
  int64_t t = 100;
  for (int i = 0; i < 30; ++i) {
    (void)file.Append(MakeEntry("b_a" + std::to_string(i), kKeyA, "H200", t), t);
    ++t;
    (void)file.Append(MakeEntry("b_b" + std::to_string(i), kKeyB, "H100", t), t);
    ++t;
  }
  const Facts parts = MakeEntry("", kKeyA, "H200", 0).key_parts;
  // "cc01": another card (gpu.name differs only) of key A's parts: a similar key.
  for (const std::string& key : {std::string(kKeyA), std::string("cc01")}) {
    const EarlierBuilds indexed = SelectEarlierBuilds(file.ReadForEstimate(key, parts, 5).entries, key, parts, 5);
    const EarlierBuilds whole = SelectEarlierBuilds(file.Read().entries, key, parts, 5);
    EXPECT_EQ(indexed.match, whole.match) << key;
    ASSERT_EQ(indexed.builds.size(), 5u) << key;
    ASSERT_EQ(indexed.builds.size(), whole.builds.size()) << key;
    for (size_t i = 0; i < whole.builds.size(); ++i) EXPECT_EQ(indexed.builds[i].elapsed, whole.builds[i].elapsed);
  }
  EXPECT_EQ(file.ReadForEstimate(kKeyA, parts, 5).entries.size(), 5u);  // the newest few, not all 30
}

TEST_F(HistoryIndexTest, AFileOfAnEarlierTrtwatchIsIndexedAtItsFirstRead) {
  AppendLine(R"({"trtwatch_history":1})");
  AppendLine(EntryToJson(MakeEntry("b_1", kKeyA, "H200", 100)));
  AppendLine(EntryToJson(MakeEntry("b_2", kKeyB, "H200", 101)));
  ASSERT_FALSE(HasIndex());
  const ReadResult summaries = HistoryFile(dir_, {}).ReadSummaries();
  EXPECT_TRUE(HasIndex());
  EXPECT_TRUE(summaries.warnings.empty());
  ASSERT_EQ(summaries.entries.size(), 2u);
  EXPECT_EQ(summaries.entries[0].build, "b_1");
  EXPECT_EQ(summaries.entries[1].families.size(), 1u);  // what `report` needs
  EXPECT_TRUE(summaries.entries[1].events.empty());     // what it does not
  EXPECT_EQ(Builds(HistoryFile(dir_, {}).ReadForEstimate(kKeyB, {}, 20).entries), std::set<std::string>{"b_2"});
}

TEST_F(HistoryIndexTest, LinesAppendedWithoutTheIndexAreReadAndIndexedByTheNextWriter) {
  HistoryFile file(dir_, {});
  (void)file.Append(MakeEntry("b_1", kKeyA, "H200", 100), 100);
  AppendLine(EntryToJson(MakeEntry("b_2", kKeyA, "H200", 101)));  // an earlier trtwatch's append
  EXPECT_EQ(Builds(file.ReadSummaries().entries), (std::set<std::string>{"b_1", "b_2"}));
  EXPECT_EQ(Builds(file.ReadForEstimate(kKeyA, {}, 20).entries), (std::set<std::string>{"b_1", "b_2"}));
  (void)file.Append(MakeEntry("b_3", kKeyA, "H200", 102), 102);
  std::string index;
  std::string error;
  ASSERT_TRUE(ReadWholeFile(dir_ + "/history.idx", &index, &error)) << error;
  EXPECT_NE(index.find("b_2"), std::string::npos);  // indexed now
  EXPECT_EQ(Builds(file.ReadSummaries().entries), (std::set<std::string>{"b_1", "b_2", "b_3"}));
}

TEST_F(HistoryIndexTest, DamagedLinesAreWarningsNamingTheLineThroughTheIndex) {
  AppendLine(R"({"trtwatch_history":1})");
  AppendLine(EntryToJson(MakeEntry("b_1", kKeyA, "H200", 100)));
  AppendLine("{not json");
  HistoryFile file(dir_, {});
  (void)file.Append(MakeEntry("b_2", kKeyA, "H200", 101), 101);
  for (const ReadResult& read : {file.ReadSummaries(), file.ReadForEstimate(kKeyA, {}, 20)}) {
    EXPECT_EQ(Builds(read.entries), (std::set<std::string>{"b_1", "b_2"}));
    ASSERT_EQ(read.warnings.size(), 1u);
    EXPECT_NE(read.warnings[0].find("history.jsonl:3: damaged entry skipped"), std::string::npos) << read.warnings[0];
  }
}

TEST_F(HistoryIndexTest, AFileRewrittenUnderItsIndexIsNotMisread) {
  HistoryFile file(dir_, {});
  for (int i = 0; i < 3; ++i) (void)file.Append(MakeEntry("b_old" + std::to_string(i), kKeyA, "H200", 100 + i), 100);
  std::string error;
  const std::string other = "{\"trtwatch_history\":1}\n" + EntryToJson(MakeEntry("b_new", kKeyA, "H200", 200)) + "\n";
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/history.jsonl", other, &error)) << error;
  EXPECT_EQ(Builds(file.ReadSummaries().entries), std::set<std::string>{"b_new"});
  EXPECT_EQ(Builds(file.ReadForEstimate(kKeyA, {}, 20).entries), std::set<std::string>{"b_new"});
}

TEST_F(HistoryIndexTest, ADamagedIndexIsRebuilt) {
  HistoryFile file(dir_, {});
  (void)file.Append(MakeEntry("b_1", kKeyA, "H200", 100), 100);
  (void)file.Append(MakeEntry("b_2", kKeyA, "H200", 101), 101);
  std::string index;
  std::string error;
  ASSERT_TRUE(ReadWholeFile(dir_ + "/history.idx", &index, &error)) << error;
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/history.idx", index.substr(0, index.find('\n') + 1) + "E\tgarbage\n", &error));
  EXPECT_EQ(Builds(file.ReadSummaries().entries), (std::set<std::string>{"b_1", "b_2"}));
  EXPECT_EQ(Builds(file.ReadForEstimate(kKeyA, {}, 20).entries), (std::set<std::string>{"b_1", "b_2"}));
}

TEST_F(HistoryIndexTest, TheBoundsHoldAndTheIndexFollowsACompaction) {
  HistoryFile file(dir_, HistoryLimits{4, 90});
  for (int i = 0; i < 12; ++i) (void)file.Append(MakeEntry("b_" + std::to_string(i), kKeyA, "H200", 1000 + i), 1000 + i);
  const ReadResult whole = file.Read();
  const ReadResult summaries = file.ReadSummaries();
  EXPECT_LE(whole.entries.size(), 5u);  // the limit and a quarter of it
  EXPECT_EQ(Builds(summaries.entries), Builds(whole.entries));
  EXPECT_TRUE(Builds(whole.entries).count("b_11"));
  EXPECT_EQ(Builds(file.ReadForEstimate(kKeyA, {}, 20).entries), Builds(whole.entries));
}

TEST_F(HistoryIndexTest, ProcessesAppendingAtOnceKeepTheIndexWhole) {
  constexpr int kProcesses = 4;
  constexpr int kEach = 15;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      HistoryFile file(dir_, {});
      int failures = 0;
      for (int i = 0; i < kEach; ++i) {
        const std::string id = "b_" + std::to_string(p) + "_" + std::to_string(i);
        if (file.Append(MakeEntry(id, kKeyA, "H200", 1000), 1000).outcome != AppendResult::Outcome::kWritten) ++failures;
        if (file.ReadSummaries().entries.empty()) ++failures;  // readers run alongside the writers
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
  const ReadResult summaries = HistoryFile(dir_, {}).ReadSummaries();
  EXPECT_TRUE(summaries.warnings.empty());
  EXPECT_EQ(summaries.entries.size(), static_cast<size_t>(kProcesses * kEach));
  EXPECT_EQ(Builds(summaries.entries).size(), static_cast<size_t>(kProcesses * kEach));
}

// An index as trtwatch wrote it before version 2: the same header but for its version,
// and each record's summary as the entry's JSON without key parts, sequence and events.
std::string VersionOneIndex(const std::string& index, const std::vector<HistoryEntry>& entries) {
  std::string header = index.substr(0, index.find('\n') + 1);
  const size_t version = header.find("\"trtwatch_history_index\":2");
  if (version == std::string::npos) return "";
  header.replace(version, std::string("\"trtwatch_history_index\":2").size(), "\"trtwatch_history_index\":1");
  std::string out = header;
  size_t at = header.size();
  for (HistoryEntry entry : entries) {
    const size_t end = index.find('\n', at);
    std::string record = index.substr(at, end - at);
    size_t tab = 0;
    for (int field = 0; field < 8; ++field) tab = record.find('\t', tab) + 1;
    entry.key_parts.clear(), entry.sequence.clear(), entry.events.clear();
    out += record.substr(0, tab) + EntryToJson(entry) + "\n";
    at = end + 1;
  }
  return out;
}

TEST_F(HistoryIndexTest, AnIndexOfTheEarlierVersionIsRebuiltOnceAndReadAsTheFileSays) {
  HistoryFile file(dir_, {});
  for (int i = 0; i < 3; ++i) (void)file.Append(MakeEntry("b_" + std::to_string(i), kKeyA, "H200", 100 + i), 100 + i);
  const std::vector<HistoryEntry> whole = file.Read().entries;
  std::string index;
  std::string error;
  ASSERT_TRUE(ReadWholeFile(dir_ + "/history.idx", &index, &error)) << error;
  const std::string old_index = VersionOneIndex(index, whole);
  ASSERT_FALSE(old_index.empty()) << index;
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/history.idx", old_index, &error)) << error;

  {  // a writer holds the lock: the reader cannot rebuild it, and reads the file itself
    TryLockResult writer = FileLock::TryAcquire(dir_ + "/history.lock");
    ASSERT_EQ(writer.outcome, TryLockResult::Outcome::kAcquired);
    const ReadResult read = file.ReadSummaries();
    EXPECT_TRUE(read.warnings.empty());
    EXPECT_EQ(Builds(read.entries), (std::set<std::string>{"b_0", "b_1", "b_2"}));
    std::string still;
    ASSERT_TRUE(ReadWholeFile(dir_ + "/history.idx", &still, &error));
    EXPECT_EQ(still, old_index);
  }
  const ReadResult read = file.ReadSummaries();  // the lock is free: rebuilt as version 2
  EXPECT_TRUE(read.warnings.empty());
  ASSERT_EQ(read.entries.size(), 3u);
  EXPECT_EQ(read.entries[2].build, "b_2");
  ASSERT_EQ(read.entries[2].families.size(), 1u);
  EXPECT_EQ(read.entries[2].families[0].self_seconds, 1.5);
  std::string rebuilt;
  ASSERT_TRUE(ReadWholeFile(dir_ + "/history.idx", &rebuilt, &error));
  EXPECT_EQ(rebuilt, index);  // what this trtwatch writes: no JSON left in it
  (void)file.ReadSummaries();
  std::string again;
  ASSERT_TRUE(ReadWholeFile(dir_ + "/history.idx", &again, &error));
  EXPECT_EQ(again, index);
  EXPECT_EQ(Builds(file.ReadForEstimate(kKeyA, {}, 20).entries), (std::set<std::string>{"b_0", "b_1", "b_2"}));
}

TEST_F(HistoryIndexTest, SummariesAreWhatReadingEveryWholeEntryGivesWhateverTheirText) {
  HistoryFile file(dir_, {});
  HistoryEntry odd = MakeEntry("b_odd\tid", kKeyA, "H200", 100, BuildStatus::kFailed);
  odd.model = "models/a%20b;c|d\te\nf\r.onnx \xc3\xa9";
  odd.backend = "%";
  odd.error = "TensorRT: [E] 100% of |layers|; failed\n";
  odd.elapsed = 0.1 + 0.2;
  odd.families = {{"Timing tactics | 100%; fp16", 3, 12.345, 1.001}, {"", 0, 0, 0}, {"Building engine", 1, 1e9, 0.5}};
  ASSERT_EQ(file.Append(odd, 100).outcome, AppendResult::Outcome::kWritten);
  ASSERT_EQ(file.Append(MakeEntry("b_plain", kKeyB, "H100", 101), 101).outcome, AppendResult::Outcome::kWritten);
  const std::vector<HistoryEntry> whole = file.Read().entries;
  const ReadResult summaries = file.ReadSummaries();
  const ReadResult list = file.ReadSummaries(SummaryDetail::kList);
  ASSERT_TRUE(summaries.warnings.empty());
  ASSERT_EQ(summaries.entries.size(), whole.size());
  ASSERT_EQ(list.entries.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    for (const HistoryEntry* read : {&summaries.entries[i], &list.entries[i]}) {
      EXPECT_EQ(read->build, whole[i].build);
      EXPECT_EQ(read->key, whole[i].key);
      EXPECT_EQ(read->model, whole[i].model);
      EXPECT_EQ(read->backend, whole[i].backend);
      EXPECT_EQ(read->error, whole[i].error);
      EXPECT_EQ(read->finished_at, whole[i].finished_at);
      EXPECT_EQ(read->elapsed, whole[i].elapsed);  // exactly: the index keeps every bit
      EXPECT_EQ(read->status, whole[i].status);
      EXPECT_TRUE(read->key_parts.empty() && read->sequence.empty() && read->events.empty());
    }
    EXPECT_TRUE(list.entries[i].families.empty());  // `history` shows none
    ASSERT_EQ(summaries.entries[i].families.size(), whole[i].families.size());
    for (size_t f = 0; f < whole[i].families.size(); ++f) {
      EXPECT_EQ(summaries.entries[i].families[f].family, whole[i].families[f].family);
      EXPECT_EQ(summaries.entries[i].families[f].count, whole[i].families[f].count);
      EXPECT_EQ(summaries.entries[i].families[f].seconds, whole[i].families[f].seconds);
      EXPECT_EQ(summaries.entries[i].families[f].self_seconds, whole[i].families[f].self_seconds);
    }
  }
  std::string index;
  std::string error;
  ASSERT_TRUE(ReadWholeFile(dir_ + "/history.idx", &index, &error)) << error;
  EXPECT_EQ(std::count(index.begin(), index.end(), '\n'), 3);  // the header and one line per entry
}

TEST_F(HistoryIndexTest, ADamagedSummaryInTheIndexIsAWarningNamingItsLine) {
  HistoryFile file(dir_, {});
  (void)file.Append(MakeEntry("b_1", kKeyA, "H200", 100), 100);
  (void)file.Append(MakeEntry("b_2", kKeyA, "H200", 101), 101);
  std::string index;
  std::string error;
  ASSERT_TRUE(ReadWholeFile(dir_ + "/history.idx", &index, &error)) << error;
  // b_2's elapsed time, the first field of its summary, made unreadable.
  const size_t record = index.rfind("\nE\t") + 1;
  size_t tab = record;
  for (int field = 0; field < 8; ++field) tab = index.find('\t', tab) + 1;
  index.insert(tab, "x");
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/history.idx", index, &error)) << error;
  for (SummaryDetail detail : {SummaryDetail::kList, SummaryDetail::kFamilies}) {
    const ReadResult read = file.ReadSummaries(detail);
    EXPECT_EQ(Builds(read.entries), std::set<std::string>{"b_1"});
    ASSERT_EQ(read.warnings.size(), 1u);
    EXPECT_NE(read.warnings[0].find("history.jsonl:3: damaged entry skipped (elapsed is not a duration)"),
              std::string::npos)
        << read.warnings[0];
  }
}

TEST(HistoryIndexRecordTest, ARecordReadsBackAsItWasWritten) {
  const std::string line = EntryToJson(MakeEntry("b_1", kKeyA, "H200", 100));
  const IndexRecord record = RecordOf(line, 42, 7);
  const std::string written = RecordLine(record);
  ASSERT_EQ(written.back(), '\n');
  const std::optional<IndexRecord> back = ParseRecord(std::string_view(written).substr(0, written.size() - 1));
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(back->damaged);
  EXPECT_EQ(back->offset, 42u);
  EXPECT_EQ(back->length, line.size());
  EXPECT_EQ(back->line, 7u);
  EXPECT_EQ(back->key, kKeyA);
  EXPECT_EQ(back->finished_at, 100);
  EXPECT_EQ(back->similar, SimilarityHash(MakeEntry("", "", "another card", 0).key_parts));
  EXPECT_FALSE(ParseRecord("E\t1\t2").has_value());
  const Result<HistoryEntry> summary = SummaryOf(*back, SummaryDetail::kFamilies);
  ASSERT_TRUE(summary.ok()) << summary.error();
  EXPECT_EQ(summary->build, "b_1");
  EXPECT_EQ(summary->model, "simulated:small-cnn");
  EXPECT_EQ(summary->elapsed, 10);
  ASSERT_EQ(summary->families.size(), 1u);
  EXPECT_EQ(summary->families[0].family, "Building engine");
  EXPECT_EQ(written.find('{'), std::string::npos);  // no JSON to parse
}

}  // namespace
}  // namespace trtwatch::history
