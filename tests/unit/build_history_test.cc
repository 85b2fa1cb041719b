// The service's history (builds/build_history.h): a worker's folder is seeded with the
// store's earlier builds of its backend and model, the worker's own entry is taken back
// (checked, named by the service's id) into the store, and the record carries the
// estimate and the key (builds/build_record.h).
#include "builds/build_history.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "builds/build_record.h"
#include "builds/build_request.h"
#include "support/parse_build_request.h"
#include "builds/stores/sqlite_store.h"
#include "history/history_file.h"

namespace trtwatch::builds {
namespace {

using history::HistoryEntry;
namespace fs = std::filesystem;

constexpr int64_t kNow = 2'000'000'000;
const std::string kKey(64, 'a');

HistoryEntry MakeEntry(const std::string& build, const std::string& model, BuildStatus status, int64_t finished_at) {
  HistoryEntry entry;
  entry.build = build;
  entry.key = kKey;
  entry.key_parts = {{"backend", "simulated"}};
  entry.backend = "simulated";
  entry.model = model;
  entry.finished_at = finished_at;
  entry.elapsed = 12.5;
  entry.status = status;
  entry.families = {{"Building engine", 1, 12.5, 1.5}};
  entry.sequence = {{"Building engine", 0, 0, 12.5, 6}};
  entry.events = {R"({"type":"build_start","v":1})"};
  return entry;
}

class BuildHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/trtwatch-history-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    StoreOpening opened = SqliteStore::Open(dir_ + "/data");
    ASSERT_TRUE(opened.store) << opened.error;
    store_ = std::move(opened.store);
    folder_ = HistoryWorkFolder(dir_ + "/data", "b_service");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Store(const HistoryEntry& entry) {
    ASSERT_EQ(StoreHistoryEntry(*store_, entry, kNow).outcome, HistoryStoreResult::Outcome::kStored);
  }
  std::vector<HistoryEntry> StoredEntries() {
    std::vector<HistoryEntry> entries;
    const std::vector<std::string> lines = store_->History({}).value();
    for (const std::string& line : lines) entries.push_back(*history::EntryFromJson(line).entry);
    return entries;
  }
  std::string dir_;
  std::string folder_;
  std::unique_ptr<RecordStore> store_;
};

TEST_F(BuildHistoryTest, TheWorkersFolderHoldsTheSuccessfulBuildsOfItsModelWithoutTheirLogs) {
  Store(MakeEntry("b_old", "simulated:small-cnn", BuildStatus::kSucceeded, kNow - 200));
  Store(MakeEntry("b_new", "simulated:small-cnn", BuildStatus::kSucceeded, kNow - 100));
  Store(MakeEntry("b_failed", "simulated:small-cnn", BuildStatus::kFailed, kNow - 50));
  Store(MakeEntry("b_longer", "simulated:small-cnn-v2", BuildStatus::kSucceeded, kNow - 50));  // a substring's neighbour
  Store(MakeEntry("b_other", "simulated:big-transformer", BuildStatus::kSucceeded, kNow - 50));

  const SeedResult seeded = SeedHistoryFolder(*store_, folder_, "simulated", "simulated:small-cnn", kNow);
  ASSERT_EQ(seeded.outcome, SeedResult::Outcome::kSeeded) << seeded.warning;
  EXPECT_EQ(seeded.entries, 2u);
  const history::ReadResult read = history::HistoryFile(folder_, {}).Read();
  EXPECT_TRUE(read.warnings.empty());
  ASSERT_EQ(read.entries.size(), 2u);
  EXPECT_EQ(read.entries[0].build, "b_old") << "oldest first, as a history file is";
  EXPECT_EQ(read.entries[1].build, "b_new");
  EXPECT_TRUE(read.entries[1].events.empty());
  EXPECT_EQ(read.entries[1].sequence.size(), 1u) << "what the estimator aligns with is kept";
}

TEST_F(BuildHistoryTest, TheWorkersEntryIsStoredUnderTheServicesIdAndTheFolderRemoved) {
  Store(MakeEntry("b_earlier", "simulated:small-cnn", BuildStatus::kSucceeded, kNow - 100));
  ASSERT_EQ(SeedHistoryFolder(*store_, folder_, "simulated", "simulated:small-cnn", kNow).outcome,
            SeedResult::Outcome::kSeeded);
  // The worker (`trtwatch build --history DIR`) appends its entry under an id of its own.
  ASSERT_EQ(history::HistoryFile(folder_, {}).Append(MakeEntry("b_worker", "simulated:small-cnn",
                                                               BuildStatus::kSucceeded, kNow), kNow)
                .outcome,
            history::AppendResult::Outcome::kWritten);

  HarvestResult harvest = HarvestHistoryFolder(folder_, "b_service");
  ASSERT_EQ(harvest.outcome, HarvestResult::Outcome::kFound) << harvest.warning;
  EXPECT_EQ(harvest.entry->build, "b_service");
  Store(*harvest.entry);
  EXPECT_EQ(RemoveHistoryFolder(folder_), "");
  EXPECT_FALSE(fs::exists(folder_));

  const std::vector<HistoryEntry> stored = StoredEntries();
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].build, "b_service");
  EXPECT_TRUE(stored[0].events.empty()) << "the service keeps the event log itself";
}

TEST_F(BuildHistoryTest, AFolderWithoutAGoodEntryOfTheWorkerGivesNoneAndAReason) {
  EXPECT_EQ(HarvestHistoryFolder(folder_, "b_service").outcome, HarvestResult::Outcome::kNone) << "no folder";
  Store(MakeEntry("b_earlier", "simulated:small-cnn", BuildStatus::kSucceeded, kNow - 100));
  ASSERT_EQ(SeedHistoryFolder(*store_, folder_, "simulated", "simulated:small-cnn", kNow).outcome,
            SeedResult::Outcome::kSeeded);
  HarvestResult harvest = HarvestHistoryFolder(folder_, "b_service");
  EXPECT_EQ(harvest.outcome, HarvestResult::Outcome::kNone) << "only the seeds: the worker added nothing";

  // A line the worker side damaged (a negative elapsed) is refused, never stored.
  nlohmann::json bad = nlohmann::json::parse(history::EntryToJson(
      MakeEntry("b_worker", "simulated:small-cnn", BuildStatus::kSucceeded, kNow)));
  bad["elapsed"] = -5;
  std::ofstream(folder_ + "/history.jsonl", std::ios::app) << bad.dump() << "\n";
  harvest = HarvestHistoryFolder(folder_, "b_service");
  EXPECT_EQ(harvest.outcome, HarvestResult::Outcome::kNone);
  EXPECT_FALSE(harvest.warning.empty());
}

TEST_F(BuildHistoryTest, TheStoredHistoryIsBoundedByAge) {
  Store(MakeEntry("b_ancient", "simulated:small-cnn", BuildStatus::kSucceeded, kNow - (kMaxHistoryAgeDays + 1) * 86400));
  Store(MakeEntry("b_recent", "simulated:small-cnn", BuildStatus::kSucceeded, kNow - 10));
  const std::vector<HistoryEntry> stored = StoredEntries();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].build, "b_recent");
}

TEST(BuildHistoryWorkerTest, AWorkerWithAHistoryFolderReadsAndAppendsThere) {
  BuildRequest r;
  std::string error;
  ASSERT_TRUE(ParseInto(R"({"simulate":"small-cnn","seed":4,"speed":2.5})", {}, &r, &error)) << error;
  EXPECT_EQ(WorkerArguments(r, "", {.history_folder = "/data/history-work/b_1"}),
            (std::vector<std::string>{"build", "--simulate", "small-cnn", "--seed", "4", "--speed", "2.5",
                                      "--progress", "json", "--history", "/data/history-work/b_1"}));
  EXPECT_EQ(HistoryModelOf("small-cnn", ""), "simulated:small-cnn") << "as the simulator names its model";
  EXPECT_EQ(HistoryModelOf("", "/models/a.onnx"), "/models/a.onnx");
}

TEST(BuildHistoryRecordTest, TheRecordCarriesTheLastEstimateAndTheKeyAndReadsThemBack) {
  BuildRecord record;
  record.id = "b_1";
  EXPECT_EQ(nlohmann::json::parse(RecordToJson(record))["estimate"], nullptr);
  EXPECT_EQ(nlohmann::json::parse(RecordToJson(record))["history_key"], nullptr);
  Estimate estimate;
  estimate.remaining = Estimate::Remaining{240, 270, 360};
  estimate.builds = 7;
  estimate.match = "similar";
  record.estimate_json = EstimateRecordJson(estimate, 12.5);
  record.history_key = kKey;
  const nlohmann::json j = nlohmann::json::parse(RecordToJson(record));
  EXPECT_EQ(j["estimate"], nlohmann::json::parse(R"({"remaining":{"p10":240.0,"p50":270.0,"p90":360.0},
      "based_on":{"builds":7,"match":"similar"},"longer_than_history":false,"t":12.5})"));
  EXPECT_EQ(j["history_key"], kKey);
  BuildRecord back;
  ASSERT_TRUE(RecordFromJson(RecordToJson(record), &back));
  EXPECT_EQ(back.estimate_json, record.estimate_json);
  EXPECT_EQ(back.history_key, kKey);

  EXPECT_TRUE(IsKeyDigest(kKey));
  EXPECT_FALSE(IsKeyDigest(std::string(64, 'A'))) << "lowercase only";
  EXPECT_FALSE(IsKeyDigest(std::string(63, 'a')));
  nlohmann::json damaged = j;
  damaged["history_key"] = "../etc";
  ASSERT_TRUE(RecordFromJson(damaged.dump(), &back));
  EXPECT_EQ(back.history_key, "") << "a stored key that is no digest reads as none";
}

}  // namespace
}  // namespace trtwatch::builds
