// HistoryFile: the local build history, one JSON line per finished build, in a folder
// of the user's (docs/history.md).
//
// `history.jsonl` starts with a version line ({"trtwatch_history": 1}); each further
// line is an entry (history_entry.h). Writers take `history.lock` (platform/file_lock.h)
// and append one line, so builds finishing at once in several processes lose nothing.
// `history.idx` indexes the file (history_index.h): writers keep it, under the lock,
// and build it for a file that has none (or one that no longer matches: a file from an
// earlier trtwatch, rewritten by one); readers use it to read only the entries they
// need, and build it too when the lock is free at once.
// When the file holds more than `max_entries` (plus a quarter, so that compaction is
// rare) or its oldest entry is older than `max_age_days`, the writer rewrites it under
// the same lock through an AtomicFile: the newest entries within the age, damaged lines
// left out. Readers take no lock: a line still being appended (no newline yet) is
// left for the next read. Damaged lines are skipped with a warning.
//
// History never makes a build fail: every problem (a damaged file, a lock that cannot
// be taken, a file from a newer trtwatch) is a warning in the result.
//
// Threading: each call opens, locks and closes what it needs; any thread, any process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "history/history_entry.h"
#include "history/history_index.h"

namespace trtwatch::history {

inline constexpr int kHistoryVersion = 1;

struct HistoryLimits {
  size_t max_entries = 1000;
  double max_age_days = 90;
};

struct AppendResult {
  enum class Outcome { kWritten, kNotWritten };
  Outcome outcome = Outcome::kNotWritten;
  std::string warning;  // kNotWritten: why, for the user (never a reason to fail a build)
};

struct ReadResult {
  std::vector<HistoryEntry> entries;  // oldest first
  std::vector<std::string> warnings;  // damaged lines, a newer version, an unreadable file
};

class HistoryFile {
 public:
  HistoryFile(std::string folder, HistoryLimits limits);

  // Appends `entry`, creating the folder and the file as needed; compacts when over
  // the limits. `now` (Unix seconds) ages the entries.
  AppendResult Append(const HistoryEntry& entry, int64_t now);
  // Every entry that reads back whole. A missing file is an empty history.
  [[nodiscard]] ReadResult Read() const;
  // The entries an estimate of a build of `key` may use, without their event logs:
  // SelectEarlierBuilds (estimator.h) with the same key, parts and `max_builds` answers
  // the same on them as on Read()'s. Reads the index and those entries only.
  [[nodiscard]] ReadResult ReadForEstimate(const std::string& key, const Facts& key_parts, size_t max_builds) const;
  // Every entry without its key parts, sequence and event log (and without its phase
  // families for SummaryDetail::kList): what `history` and `report` show. Reads the
  // index only, and parses no JSON.
  [[nodiscard]] ReadResult ReadSummaries(SummaryDetail detail = SummaryDetail::kFamilies) const;

  const std::string& path() const { return path_; }

 private:
  const std::string folder_;
  const std::string path_;
  // Under the lock: an index that covers every complete line of the file, built or
  // extended as needed. Not valid (and `*error` says why) when it cannot be written.
  IndexScan SyncIndex(const HistoryHead& head, std::string* error) const;
  // Under the lock: the file rewritten with the newest entries within the limits and
  // `line`, and its index with it.
  bool Compact(const std::string& line, int64_t now, std::string* error) const;
  // Reads the index (building it when the lock is free and it is missing or stale),
  // visiting each record, then the tail's lines; false when there is no usable index.
  // Damaged lines are warnings in `result`; `reset` forgets what was visited before a rebuild.
  bool ReadIndexed(const std::function<void(const IndexRecord&)>& visit, const std::function<void(HistoryEntry&&)>& tail,
                   const std::function<void()>& reset, ReadResult* result) const;

  const std::string lock_path_;
  const std::string index_path_;
  const HistoryLimits limits_;
};

// Unix seconds now (the system clock: entries are dated for people).
int64_t UnixNow();

}  // namespace trtwatch::history
