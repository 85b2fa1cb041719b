#include "history/history_file.h"

#include <chrono>
#include <fstream>
#include <filesystem>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <thread>

#include "platform/atomic_file.h"
#include "platform/file_access.h"
#include "platform/file_lock.h"

namespace trtwatch::history {

namespace {

using json = nlohmann::json;

// How long a writer waits for another's lock before giving up with a warning: an
// append takes milliseconds, so a lock held this long belongs to a stuck process.
constexpr auto kLockPatience = std::chrono::seconds(5);
constexpr auto kLockRetry = std::chrono::milliseconds(5);

std::string VersionLine() { return json{{"trtwatch_history", kHistoryVersion}}.dump() + "\n"; }

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
    contents.warnings.push_back(path + " was written by a newer trtwatch (history version " + std::to_string(version) +
                                "); it is left as it is: upgrade trtwatch to use it");
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
      contents.warnings.push_back(path + ":" + std::to_string(i + 1) + ": damaged entry skipped (" + parsed.error + ")");
    }
  }
  return contents;
}

// What an append needs to know of the file, read without parsing every entry (it is read
// under the lock, by every build): whether a newer trtwatch wrote it, how many entry
// lines it has, and when its oldest readable entry finished.
struct Survey {
  size_t lines = 0;
  bool newer = false;
  std::optional<int64_t> oldest;
};

Survey SurveyOf(std::string_view text) {
  Survey survey;
  const std::vector<std::string_view> lines = CompleteLines(text);
  if (lines.empty()) return survey;
  const int version = VersionOf(lines[0]);
  survey.newer = version > kHistoryVersion;
  for (size_t i = version == kHistoryVersion ? 1 : 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    ++survey.lines;
    if (survey.oldest) continue;
    ParsedEntry parsed = EntryFromJson(lines[i]);
    if (parsed.entry) survey.oldest = parsed.entry->finished_at;
  }
  return survey;
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

// Paths are UTF-8 on every platform (Windows' narrow file functions would read them in
// the ANSI code page).
std::filesystem::path Utf8Path(const std::string& path) {
  return std::filesystem::path(std::u8string(path.begin(), path.end()));
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

}  // namespace

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

HistoryFile::HistoryFile(std::string folder, HistoryLimits limits)
    : folder_(std::move(folder)),
      path_(folder_ + "/history.jsonl"),
      lock_path_(folder_ + "/history.lock"),
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

  std::string text;
  if (!ReadText(path_, &text, &error)) return refuse(error);
  const Survey survey = SurveyOf(text);
  if (survey.newer) return refuse(Parse(path_, text).warnings.front());

  const std::string line = EntryToJson(entry) + "\n";
  const double max_age_seconds = limits_.max_age_days * 86400;
  const bool too_many = survey.lines + 1 > limits_.max_entries + limits_.max_entries / 4;
  const bool too_old = survey.oldest && static_cast<double>(now - *survey.oldest) > max_age_seconds;
  if (too_many || too_old) {
    // Rewrite (once in a quarter of the limit's appends): the newest entries within the
    // age, then this one.
    const Contents contents = Parse(path_, text);
    std::string rewritten = VersionLine();
    size_t keep_from = 0;
    while (keep_from < contents.entries.size() &&
           static_cast<double>(now - contents.entries[keep_from].finished_at) > max_age_seconds) {
      ++keep_from;
    }
    const size_t room = limits_.max_entries > 0 ? limits_.max_entries - 1 : 0;
    if (contents.entries.size() - keep_from > room) keep_from = contents.entries.size() - room;
    for (size_t i = keep_from; i < contents.entries.size(); ++i) rewritten += EntryToJson(contents.entries[i]) + "\n";
    rewritten += line;
    if (!WriteFileAtomically(path_, rewritten, &error)) return refuse(error);
  } else {
    // A file that does not end in a newline was cut short by a crash: end that line
    // (it reads as damaged) so that this entry starts a line of its own.
    std::string append = text.empty() ? VersionLine() : "";
    if (!text.empty() && text.back() != '\n') append += "\n";
    if (!AppendText(path_, append + line, &error)) return refuse(error);
  }
  result.outcome = AppendResult::Outcome::kWritten;
  return result;
}

}  // namespace trtwatch::history
