#include "builds/build_history.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "history/history_file.h"
#include "platform/atomic_file.h"
#include "platform/file_access.h"

namespace trtwatch::builds {

namespace {

namespace fs = std::filesystem;

// The seeds' ids, one a line, beside the history file: what the harvest skips.
constexpr const char* kSeededFile = "/seeded";
// A worker's folder holds the seeds and one entry, tens of KiB each: a file larger
// than this was not written by a worker of ours, and is not read.
constexpr uintmax_t kMaxFolderFileBytes = 32u << 20;

}  // namespace

std::string HistoryWorkFolder(const std::string& data_dir, const std::string& id) {
  return data_dir + "/history-work/" + id;
}

std::string HistoryModelOf(const std::string& simulate, const std::string& resolved_model) {
  return simulate.empty() ? resolved_model : "simulated:" + simulate;
}

SeedResult SeedHistoryFolder(RecordStore& store, const std::string& folder, const std::string& backend,
                             const std::string& model, int64_t now_unix) {
  SeedResult result;
  std::error_code ec;
  fs::create_directories(fs::path(folder).parent_path(), ec);
  std::string error;
  if (!MakePrivateFolder(folder, &error)) return result.warning = "cannot make " + folder + ": " + error, result;
  HistoryQuery query;
  query.model = model;
  query.backend = backend;
  query.status = "succeeded";
  query.finished_after = now_unix - kMaxHistoryAgeDays * 86400;
  query.limit = kMaxSeededEntries;
  const Result<std::vector<std::string>> read = store.History(query);
  if (!read.ok()) return result.warning = "cannot read the history: " + read.error(), result;
  std::string lines = "{\"trtwatch_history\":" + std::to_string(history::kHistoryVersion) + "}\n";
  std::string ids;
  for (auto it = read->rbegin(); it != read->rend(); ++it) {  // the file is oldest first
    history::ParsedEntry parsed = history::EntryFromJson(*it);
    if (!parsed.entry || parsed.entry->model != model) continue;  // a substring's neighbour, or damage
    parsed.entry->events.clear();
    lines += history::EntryToJson(*parsed.entry) + "\n";
    ids += parsed.entry->build + "\n";
    ++result.entries;
  }
  if (!WriteFileAtomically(folder + "/history.jsonl", lines, &error) ||
      !WriteFileAtomically(folder + kSeededFile, ids, &error)) {
    return result.warning = "cannot write the history for the worker: " + error, result;
  }
  result.outcome = SeedResult::Outcome::kSeeded;
  return result;
}

HarvestResult HarvestHistoryFolder(const std::string& folder, const std::string& service_id) {
  HarvestResult result;
  std::set<std::string> seeds;
  {
    std::ifstream seeded(folder + kSeededFile);
    for (std::string line; std::getline(seeded, line) && seeds.size() <= static_cast<size_t>(kMaxSeededEntries);) seeds.insert(line);
  }
  const history::HistoryFile file(folder, {});
  std::error_code ec;
  const uintmax_t bytes = fs::file_size(file.path(), ec);
  if (ec) return result.warning = "the worker left no history entry", result;
  if (bytes > kMaxFolderFileBytes) return result.warning = "the worker's history file is too large to read", result;
  history::ReadResult read = file.Read();
  for (auto it = read.entries.rbegin(); it != read.entries.rend(); ++it) {
    if (seeds.count(it->build)) continue;
    result.entry = std::move(*it);
    result.entry->build = service_id;  // the worker made up its own id; the service's names the build
    result.outcome = HarvestResult::Outcome::kFound;
    return result;
  }
  result.warning = read.warnings.empty() ? "the worker left no history entry" : read.warnings.front();
  return result;
}

HistoryStoreResult StoreHistoryEntry(RecordStore& store, history::HistoryEntry entry, int64_t now_unix,
                                     int64_t lease_generation) {
  HistoryStoreResult result;
  entry.events.clear();  // the service keeps the build's event log itself
  HistoryRow row{entry.build,
                 entry.key,
                 entry.model,
                 entry.backend,
                 std::string(BuildStatusName(entry.status)),
                 entry.finished_at,
                 history::EntryToJson(entry),
                 lease_generation};
  if (Status put = store.PutHistory(row); !put.ok()) return result.warning = "cannot store it: " + put.error(), result;
  if (Result<int64_t> pruned = store.PruneHistory(now_unix - kMaxHistoryAgeDays * 86400, kMaxHistoryEntries);
      !pruned.ok()) {
    result.warning = "stored, but the history could not be pruned: " + pruned.error();
  }
  result.outcome = HistoryStoreResult::Outcome::kStored;
  return result;
}

std::string RemoveHistoryFolder(const std::string& folder) {
  std::error_code ec;
  fs::remove_all(folder, ec);
  return ec ? "cannot remove " + folder + ": " + ec.message() : "";
}

}  // namespace trtwatch::builds
