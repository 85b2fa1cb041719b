#include "history/history_file.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <fstream>
#include <filesystem>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <thread>

#include "history/estimator.h"
#include "platform/atomic_file.h"
#include "platform/file_access.h"
#include "platform/file_lock.h"
#include "platform/utf8_edges.h"

namespace trtwatch::history {

using json = nlohmann::json;

namespace {

// How long a writer waits for another's lock before giving up with a warning: an
// append takes milliseconds, so a lock held this long belongs to a stuck process.
constexpr auto kLockPatience = std::chrono::seconds(5);
constexpr auto kLockRetry = std::chrono::milliseconds(5);

// The lines of `text` that are complete (end in a newline); a last line without one
// is an append in progress.
std::vector<std::string_view> CompleteLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t begin = 0;
  for (size_t end = text.find('\n'); end != std::string_view::npos; end = text.find('\n', begin)) {
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

// The file's version from its first line; 0 when the line is not a version line.
int VersionOf(std::string_view first_line) {
  const json j = json::parse(first_line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("trtwatch_history") || !j["trtwatch_history"].is_number_integer()) return 0;
  return j["trtwatch_history"].get<int>();
}

std::string NewerWarning(const std::string& path, int version) {
  return path + " was written by a newer trtwatch (history version " + std::to_string(version) +
         "); it is left as it is: upgrade trtwatch to use it";
}

std::string VersionLine() { return json{{"trtwatch_history", kHistoryVersion}}.dump() + "\n"; }

std::string DamagedWarning(const std::string& path, uint64_t line, const std::string& why) {
  return path + ":" + std::to_string(line) + ": damaged entry skipped (" + why + ")";
}

struct Contents {
  std::vector<HistoryEntry> entries;
  std::vector<std::string> warnings;
  size_t lines = 0;  // entry lines, damaged ones included
  bool newer = false;  // written by a newer trtwatch: leave it alone
};

Contents Parse(const std::string& path, std::string_view text) {
  Contents contents;
  const std::vector<std::string_view> lines = CompleteLines(text);
  if (lines.empty()) return contents;
  const int version = VersionOf(lines[0]);
  if (version > kHistoryVersion) {
    contents.newer = true;
    contents.warnings.push_back(NewerWarning(path, version));
    return contents;
  }
  const size_t first = version == kHistoryVersion ? 1 : 0;
  if (first == 0) contents.warnings.push_back(path + ":1: no version line; reading it as version 1");
  for (size_t i = first; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    ++contents.lines;
    ParsedEntry parsed = EntryFromJson(lines[i]);
    if (parsed.entry) {
      contents.entries.push_back(std::move(*parsed.entry));
    } else {
      contents.warnings.push_back(DamagedWarning(path, i + 1, parsed.error));
    }
  }
  return contents;
}

// Reads `path`; a missing file reads as empty.
bool ReadText(const std::string& path, std::string* text, std::string* error) {
  int error_number = 0;
  if (ReadWholeFile(path, text, error, &error_number)) return true;
  if (error_number == ENOENT) {
    text->clear();
    return true;
  }
  return false;
}

std::unique_ptr<FileLock> LockPatiently(const std::string& lock_path, std::string* error) {
  const auto give_up = std::chrono::steady_clock::now() + kLockPatience;
  for (;;) {
    TryLockResult attempt = FileLock::TryAcquire(lock_path);
    if (attempt.outcome == TryLockResult::Outcome::kAcquired) return std::move(attempt.lock);
    if (attempt.outcome == TryLockResult::Outcome::kError) {
      *error = attempt.error;
      return nullptr;
    }
    if (std::chrono::steady_clock::now() >= give_up) {
      *error = lock_path + " is held by process " + std::to_string(attempt.holder_pid) + " for more than 5 s";
      return nullptr;
    }
    std::this_thread::sleep_for(kLockRetry);
  }
}

// What `history` and `report` read of an entry.
void KeepSummary(HistoryEntry* entry, SummaryDetail detail) {
  entry->key_parts.clear();
  entry->sequence.clear();
  entry->events.clear();
  if (detail == SummaryDetail::kList) entry->families.clear();
}

// An entry for the estimate, which needs its sequence, not its event log: the log (most
// of the line) is skipped as it is parsed, not built.
ParsedEntry EntryWithoutEvents(std::string_view line) {
  const json j = json::parse(
      line,
      [](int depth, json::parse_event_t event, const json& parsed) {
        return !(depth == 1 && event == json::parse_event_t::key && parsed == "events");
      },
      /*allow_exceptions=*/false);
  if (!j.is_object()) return EntryFromJson(line);  // which says what is wrong with it
  return EntryFromJson(j.dump(-1, ' ', false, json::error_handler_t::replace));
}

bool AppendText(const std::string& path, const std::string& text, std::string* error) {
  std::ofstream file(Utf8Path(path), std::ios::binary | std::ios::app);
  if (!file) {
    *error = "cannot open " + path + " to append";
    return false;
  }
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.close();
  if (!file) *error = "cannot append to " + path + " (is the disk full?)";
  return static_cast<bool>(file);
}

// Indexes the lines of `path` from `scan.covered` up to `size`: appended to the index,
// or, with a `header`, written as a new index after it. Not valid when it cannot.
IndexScan ExtendIndex(const std::string& path, const std::string& index_path, uint64_t size, IndexScan scan,
                      const std::string& header, std::string* error) {
  std::string text = header;
  if (scan.covered < size) {
    const bool read = ForEachLineFrom(path, scan.covered, scan.last_line + 1,
                                      [&](std::string_view line, uint64_t offset, uint64_t number) {
                                        if (line.empty()) return;
                                        const IndexRecord record = RecordOf(line, offset, number);
                                        if (!record.damaged && !scan.oldest) scan.oldest = record.finished_at;
                                        scan.covered = offset + line.size() + 1;
                                        scan.last_line = number;
                                        ++scan.records;
                                        text += RecordLine(record);
                                      });
    if (!read) return *error = "cannot read " + path, IndexScan{};
  }
  const bool written = !header.empty() ? WriteFileAtomically(index_path, text, error)
                                       : text.empty() || AppendText(index_path, text, error);
  if (!written) return IndexScan{};
  scan.valid = true;
  return scan;
}

}  // namespace

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

HistoryFile::HistoryFile(std::string folder, HistoryLimits limits)
    : folder_(std::move(folder)),
      path_(folder_ + "/history.jsonl"),
      lock_path_(folder_ + "/history.lock"),
      index_path_(folder_ + "/history.idx"),
      limits_(limits) {}

ReadResult HistoryFile::Read() const {
  ReadResult result;
  std::string text;
  std::string error;
  if (!ReadText(path_, &text, &error)) {
    result.warnings.push_back("cannot read the build history: " + error);
    return result;
  }
  Contents contents = Parse(path_, text);
  result.entries = std::move(contents.entries);
  result.warnings = std::move(contents.warnings);
  return result;
}

AppendResult HistoryFile::Append(const HistoryEntry& entry, int64_t now) {
  AppendResult result;
  const auto refuse = [&](const std::string& why) {
    result.warning = "the build was not added to the history in " + folder_ + ": " + why;
    return result;
  };
  std::error_code ec;
  std::filesystem::create_directories(Utf8Path(folder_).parent_path(), ec);
  std::string error;
  if (!MakePrivateFolder(folder_, &error)) return refuse(error);
  const std::unique_ptr<FileLock> lock = LockPatiently(lock_path_, &error);
  if (!lock) return refuse(error);

  const HistoryHead head = ReadHistoryHead(path_);
  if (head.version > kHistoryVersion) return refuse(NewerWarning(path_, head.version));
  const IndexScan scan = SyncIndex(head, &error);
  if (!scan.valid) return refuse(error);

  const std::string line = EntryToJson(entry);
  const double max_age_seconds = limits_.max_age_days * 86400;
  const bool too_many = scan.records + 1 > limits_.max_entries + limits_.max_entries / 4;
  const bool too_old = scan.oldest && static_cast<double>(now - *scan.oldest) > max_age_seconds;
  if (too_many || too_old) {
    // Rewrite (once in a quarter of the limit's appends): the newest entries within the
    // age, then this one.
    if (!Compact(line, now, &error)) return refuse(error);
  } else {
    // A file that does not end in a newline was cut short by a crash: end that line
    // (it reads as damaged) so that this entry starts a line of its own.
    std::string append = head.size == 0 ? VersionLine() : "";
    if (!head.ends_in_newline) append += "\n";
    if (!AppendText(path_, append + line + "\n", &error)) return refuse(error);
    // Index what was just appended (and the line it ended); a new file, from its start.
    const bool indexed = head.size == 0 ? SyncIndex(ReadHistoryHead(path_), &error).valid
                                        : ExtendIndex(path_, index_path_, UINT64_MAX, scan, "", &error).valid;
    if (!indexed) return refuse(error);
  }
  result.outcome = AppendResult::Outcome::kWritten;
  return result;
}


IndexScan HistoryFile::SyncIndex(const HistoryHead& head, std::string* error) const {
  IndexScan scan = ScanIndex(index_path_, head, nullptr);
  if (scan.valid) return ExtendIndex(path_, index_path_, head.size, scan, "", error);
  // None yet (an earlier trtwatch's file), or another file's: index every line.
  scan = IndexScan{};
  scan.covered = head.entries_from;
  scan.last_line = head.entries_from > 0 ? 1 : 0;
  return ExtendIndex(path_, index_path_, head.exists ? head.size : 0, scan, head.header, error);
}

namespace {

// How many of the readable entries (finished at `finished`, oldest first) a compaction
// drops from the front so that the rest and one more fit the limits.
size_t DroppedByCompaction(const std::vector<int64_t>& finished, const HistoryLimits& limits, int64_t now) {
  const double max_age_seconds = limits.max_age_days * 86400;
  size_t keep_from = 0;
  while (keep_from < finished.size() && static_cast<double>(now - finished[keep_from]) > max_age_seconds) ++keep_from;
  const size_t room = limits.max_entries > 0 ? limits.max_entries - 1 : 0;
  if (finished.size() - keep_from > room) keep_from = finished.size() - room;
  return keep_from;
}

}  // namespace

bool HistoryFile::Compact(const std::string& line, int64_t now, std::string* error) const {
  const HistoryHead head = ReadHistoryHead(path_);
  std::vector<int64_t> finished;
  (void)ScanIndex(index_path_, head, [&](const IndexRecord& r) {
    if (!r.damaged) finished.push_back(r.finished_at);
  });
  const size_t keep_from = DroppedByCompaction(finished, limits_, now);
  const std::unique_ptr<AtomicFile> rewritten = AtomicFile::Create(path_, error);
  if (!rewritten) return false;
  std::string records;
  std::string first;  // the first entry line, which the index's header names
  uint64_t offset = 0;
  uint64_t number = 1;
  bool ok = true;
  const auto keep = [&](std::string_view text, IndexRecord record) {
    if (first.empty()) first = text;
    record.offset = offset;
    record.line = number++;
    records += RecordLine(record);
    offset += text.size() + 1;
    ok = ok && rewritten->Write(text.data(), text.size(), error) && rewritten->Write("\n", 1, error);
  };
  const std::string version = VersionLine();
  ok = rewritten->Write(version.data(), version.size(), error);
  offset = version.size();
  number = 2;
  size_t ordinal = 0;
  (void)ScanIndex(index_path_, head, [&](const IndexRecord& r) {
    if (r.damaged || ordinal++ < keep_from || !ok) return;
    const std::optional<std::string> text = ReadLineAt(path_, r);
    if (text) return keep(*text, r);
    ok = false;
    *error = "cannot read " + path_ + " to compact it";
  });
  keep(line, RecordOf(line, 0, 0));
  if (!ok || !rewritten->Commit(error)) return false;
  return WriteFileAtomically(index_path_, IndexHeader(first) + records, error);
}

bool HistoryFile::ReadIndexed(const std::function<void(const IndexRecord&)>& visit,
                              const std::function<void(HistoryEntry&&)>& tail, const std::function<void()>& reset,
                              ReadResult* result) const {
  HistoryHead head = ReadHistoryHead(path_);
  if (!head.exists || head.version > kHistoryVersion) return false;  // Read() says it as it is
  const auto record = [&](const IndexRecord& r) {
    if (r.damaged) return result->warnings.push_back(DamagedWarning(path_, r.line, r.text));
    visit(r);
  };
  IndexScan scan = ScanIndex(index_path_, head, record);
  if (!scan.valid) {
    // None yet (a file of an earlier trtwatch), or stale: built now unless a writer is at it.
    reset();
    result->warnings.clear();
    const TryLockResult attempt = FileLock::TryAcquire(lock_path_);
    if (attempt.outcome != TryLockResult::Outcome::kAcquired) return false;
    head = ReadHistoryHead(path_);
    std::string error;
    if (!SyncIndex(head, &error).valid) return false;
    scan = ScanIndex(index_path_, head, record);
    if (!scan.valid) return false;
  }
  if (head.version == 0 && head.size > 0) {
    result->warnings.insert(result->warnings.begin(), path_ + ":1: no version line; reading it as version 1");
  }
  (void)ForEachLineFrom(path_, scan.covered, scan.last_line + 1, [&](std::string_view line, uint64_t, uint64_t number) {
    if (line.empty()) return;
    ParsedEntry parsed = EntryFromJson(line);
    if (!parsed.entry) return result->warnings.push_back(DamagedWarning(path_, number, parsed.error));
    tail(std::move(*parsed.entry));
  });
  return true;
}

ReadResult HistoryFile::ReadSummaries(SummaryDetail detail) const {
  ReadResult result;
  const bool indexed = ReadIndexed(
      [&](const IndexRecord& r) {
        Result<HistoryEntry> summary = SummaryOf(r, detail);
        if (!summary.ok()) return result.warnings.push_back(DamagedWarning(path_, r.line, summary.error()));
        result.entries.push_back(std::move(summary).value());
      },
      [&](HistoryEntry&& entry) {
        KeepSummary(&entry, detail);
        result.entries.push_back(std::move(entry));
      },
      [&] { result.entries.clear(); }, &result);
  if (indexed) return result;
  result = Read();
  for (HistoryEntry& entry : result.entries) KeepSummary(&entry, detail);
  return result;
}

ReadResult HistoryFile::ReadForEstimate(const std::string& key, const Facts& key_parts, size_t max_builds) const {
  ReadResult result;
  // The newest successful builds of the key, and of a similar key (the key's own among
  // them): what SelectEarlierBuilds may take.
  std::deque<IndexRecord> exact;
  std::deque<IndexRecord> similar;
  std::vector<HistoryEntry> tail;
  const uint64_t similar_hash = SimilarityHash(key_parts);
  const auto keep = [max_builds](std::deque<IndexRecord>* newest, const IndexRecord& r) {
    newest->push_back(r);
    if (newest->size() > max_builds) newest->pop_front();
  };
  const bool indexed = ReadIndexed(
      [&](const IndexRecord& r) {
        if (r.status != BuildStatus::kSucceeded) return;
        IndexRecord place = r;
        place.text.clear();
        if (r.key == key) keep(&exact, place);
        if (r.key == key || (!key_parts.empty() && r.similar == similar_hash)) keep(&similar, place);
      },
      [&](HistoryEntry&& entry) { tail.push_back(std::move(entry)); },
      [&] { exact.clear(), similar.clear(), tail.clear(); }, &result);
  if (!indexed) return Read();
  std::map<uint64_t, const IndexRecord*> chosen;  // by offset: file order, oldest first
  for (const IndexRecord& r : exact) chosen.emplace(r.offset, &r);
  // Similar keys count only when the key has too few builds of its own.
  const auto exact_in_tail = std::count_if(tail.begin(), tail.end(), [&](const HistoryEntry& entry) {
    return entry.key == key && entry.status == BuildStatus::kSucceeded;
  });
  if (exact.size() + static_cast<size_t>(exact_in_tail) < kMinEarlierBuilds) {
    for (const IndexRecord& r : similar) chosen.emplace(r.offset, &r);
  }
  for (const auto& [offset, r] : chosen) {
    const std::optional<std::string> line = ReadLineAt(path_, *r);
    ParsedEntry parsed = line ? EntryWithoutEvents(*line) : ParsedEntry{};
    // Another line than the index says: the file was rewritten between the reads.
    if (!parsed.entry || parsed.entry->key != r->key || parsed.entry->finished_at != r->finished_at) return Read();
    result.entries.push_back(std::move(*parsed.entry));
  }
  for (HistoryEntry& entry : tail) result.entries.push_back(std::move(entry));
  return result;
}

}  // namespace trtwatch::history
