// The history's index, `history.idx` beside `history.jsonl` (history_file.h,
// docs/history.md): one line per line of the history file, saying where the line lies
// and what a build's estimate and a listing need of it, so that neither parses (nor
// reads) every entry and its event log.
//
// The index starts with a header line that names the history file's first entry line
// by a hash: a history file rewritten by anyone (compaction, an older trtwatch, a
// person) no longer matches its index, which is then rebuilt. Lines appended to the
// history file after the last indexed one (an older trtwatch's, or an append between
// its two writes) are the "tail": readers parse it themselves, the next writer indexes
// it. Each record line is tab-separated:
//   E <offset> <length> <line> <finished_at> <status> <key> <similar> <summary>
//   D <offset> <length> <line> <why it is damaged>
// The summary is what `history` and `report` show of the entry, no JSON, so that
// neither parses any (version 2; version 1 kept the entry's JSON without key parts,
// sequence and event log, and is rebuilt once):
//   <elapsed> <build> <model> <backend> <error> <families>
// numbers as std::to_chars writes them (they read back exactly), text with '%', tab,
// line ends, ';' and '|' written %XX, families as `name|count|seconds|self` joined by ';'.
//
// Threading: pure functions, and reads and writes of files named by the caller.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "history/history_entry.h"

namespace trtwatch::history {

inline constexpr int kIndexVersion = 2;

struct IndexRecord {
  bool damaged = false;
  uint64_t offset = 0;  // of the line in history.jsonl
  uint64_t length = 0;  // without its newline
  uint64_t line = 0;    // 1-based line number in history.jsonl, for warnings
  int64_t finished_at = 0;
  BuildStatus status = BuildStatus::kFailed;
  std::string key;
  uint64_t similar = 0;  // SimilarityHash of the key parts
  std::string text;      // the summary (as the index holds it, SummaryOf reads it); damaged: why
};

// What SummaryOf reads of a record: the list's fields (`history`), or the phase
// families too (`report`, `history --json`).
enum class SummaryDetail { kList, kFamilies };

// The entry a record summarizes, without key parts, sequence and event log (and
// without families for kList): checked and bounded as EntryFromJson checks a line.
[[nodiscard]] Result<HistoryEntry> SummaryOf(const IndexRecord& record, SummaryDetail detail);

// A hash of what SameExceptGpuName compares (history/estimator.h): equal parts hash equal.
uint64_t SimilarityHash(const Facts& key_parts);

// What the index keeps of the history file's line `line` (1-based), at `offset`.
IndexRecord RecordOf(std::string_view line, uint64_t offset, uint64_t line_number);
// The record as an index line (with its newline).
std::string RecordLine(const IndexRecord& record);
// A record line read back (without its newline); unset when it is not one.
std::optional<IndexRecord> ParseRecord(std::string_view line);

// The header line (with its newline) of an index of a history file whose first entry
// line is `first_entry_line` (empty: none yet).
std::string IndexHeader(std::string_view first_entry_line);

// What a reader needs of the history file's first lines.
struct HistoryHead {
  bool exists = false;
  int version = 0;               // 0: no version line
  uint64_t entries_from = 0;     // where the entry lines start (past the version line)
  std::string header;            // the IndexHeader an index of this file must start with
  uint64_t size = 0;             // the file's size when read
  bool ends_in_newline = true;   // false: its last line was cut short (or is being written)
};
[[nodiscard]] HistoryHead ReadHistoryHead(const std::string& history_path);

struct IndexScan {
  bool valid = false;       // the index exists, and matches the history file's head
  uint64_t covered = 0;     // where the indexed lines end in history.jsonl (past a newline)
  uint64_t last_line = 0;   // the last indexed line's number (1: only the version line)
  size_t records = 0;       // entry lines indexed, damaged ones included
  std::optional<int64_t> oldest;  // finished_at of the first readable entry
};

// Reads the index at `index_path` record by record, calling `visit` on each (when set).
[[nodiscard]] IndexScan ScanIndex(const std::string& index_path, const HistoryHead& head,
                                  const std::function<void(const IndexRecord&)>& visit);

// The complete lines of history.jsonl from `offset` on (the tail), with their offsets
// and line numbers (the first is `first_line`); bytes after the last newline are left.
[[nodiscard]] bool ForEachLineFrom(const std::string& history_path, uint64_t offset, uint64_t first_line,
                                   const std::function<void(std::string_view, uint64_t, uint64_t)>& visit);

// One history line, by its record: unset when it cannot be read whole.
[[nodiscard]] std::optional<std::string> ReadLineAt(const std::string& history_path, const IndexRecord& record);

}  // namespace trtwatch::history
