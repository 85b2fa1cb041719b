#include "builds/history_queries.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "builds/build_history.h"
#include "history/history_json.h"
#include "history/report.h"

namespace trtwatch::builds {

namespace {

using json = nlohmann::json;
using history::HistoryEntry;

struct Entries {
  bool ok = false;
  std::vector<HistoryEntry> entries;  // as the query returned them: newest first
  std::string error;
};

// The rows' entries; a row that does not read back (a damaged database) is left out.
Entries Read(RecordStore& store, const HistoryQuery& query) {
  Entries result;
  const Result<std::vector<std::string>> read = store.History(query);
  if (!read.ok()) return result.error = "the service could not read its history (" + read.error() + ")", result;
  for (const std::string& line : *read) {
    history::ParsedEntry parsed = history::EntryFromJson(line);
    if (parsed.entry) result.entries.push_back(std::move(*parsed.entry));
  }
  result.ok = true;
  return result;
}

HistoryAnswer Ok(const json& body) {
  return {HistoryAnswer::Outcome::kOk, body.dump(-1, ' ', false, json::error_handler_t::replace), ""};
}

HistoryAnswer Failed(HistoryAnswer::Outcome outcome, std::string error) { return {outcome, "", std::move(error)}; }

// The entry of build `id`, or why there is none.
std::optional<HistoryEntry> EntryOf(RecordStore& store, const std::string& id, HistoryAnswer* failure) {
  HistoryQuery query;
  query.build = id;
  query.limit = 1;
  Entries found = Read(store, query);
  if (!found.ok) return *failure = Failed(HistoryAnswer::Outcome::kStorageError, found.error), std::nullopt;
  if (found.entries.empty()) {
    *failure = Failed(HistoryAnswer::Outcome::kNotInHistory,
                      "build \"" + id + "\" is not in the history: it is still running, or it ended before its "
                      "build key was known; compare builds that have finished (GET /history lists them)");
    return std::nullopt;
  }
  return std::move(found.entries.front());
}

}  // namespace

HistoryAnswer ListHistory(RecordStore& store, const HistoryQuery& query) {
  Entries read = Read(store, query);
  if (!read.ok) return Failed(HistoryAnswer::Outcome::kStorageError, read.error);
  json builds = json::array();
  for (const HistoryEntry& entry : read.entries) builds.push_back(history::EntryJson(entry));
  return Ok({{"builds", builds}});
}

HistoryAnswer ReportHistory(RecordStore& store, HistoryQuery query) {
  query.limit = static_cast<int>(kMaxHistoryEntries);
  Entries read = Read(store, query);
  if (!read.ok) return Failed(HistoryAnswer::Outcome::kStorageError, read.error);
  std::vector<HistoryEntry> oldest_first(std::make_move_iterator(read.entries.rbegin()),
                                         std::make_move_iterator(read.entries.rend()));
  json keys = json::array();
  for (const history::KeyReport& report : history::Report(oldest_first)) keys.push_back(history::ReportJson(report));
  return Ok({{"keys", keys}});
}

HistoryAnswer CompareBuilds(RecordStore& store, const std::string& id, const std::string& with) {
  HistoryAnswer failure;
  const std::optional<HistoryEntry> after = EntryOf(store, id, &failure);
  if (!after) return failure;
  if (!with.empty()) {
    const std::optional<HistoryEntry> before = EntryOf(store, with, &failure);
    if (!before) return failure;
    return Ok(history::ComparisonJson(history::Compare(*before, before->build, *after, after->build)));
  }
  HistoryQuery same_key;
  same_key.key = after->key;
  same_key.limit = static_cast<int>(kMaxHistoryEntries);
  Entries read = Read(store, same_key);
  if (!read.ok) return Failed(HistoryAnswer::Outcome::kStorageError, read.error);
  const history::MedianComparison median = history::CompareWithKeyMedian(read.entries, *after);
  if (!median.comparison) {
    return Failed(HistoryAnswer::Outcome::kNotInHistory, median.error + "; compare it with another build: ?with=ID");
  }
  return Ok(history::ComparisonJson(*median.comparison));
}

}  // namespace trtwatch::builds
