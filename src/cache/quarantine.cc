#include "cache/quarantine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "core/clock.h"
#include "platform/atomic_file.h"

namespace trtwatch::cache {

namespace {

namespace fs = std::filesystem;

constexpr const char* kQuarantineFolder = "quarantine";
constexpr const char* kReasonFile = "why";
constexpr uint64_t kMaxReasonBytes = 4096;

// 20261206T051500Z: sorts by time, and is a valid file name everywhere.
std::string UtcStamp(std::chrono::system_clock::time_point now) {
  const auto day = std::chrono::floor<std::chrono::days>(now);
  const std::chrono::year_month_day date(day);
  const std::chrono::hh_mm_ss time(std::chrono::floor<std::chrono::seconds>(now - day));
  char text[32];
  std::snprintf(text, sizeof text, "%04d%02u%02uT%02d%02d%02dZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()), static_cast<int>(time.hours().count()),
                static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count()));
  return text;
}

}  // namespace

void MakeReadOnly(const std::string& path) {
  std::error_code ec;  // best effort: the digests, not the mode, are what protect a hit
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read, ec);
}

bool RemoveEntryFolder(const std::string& path) {
  std::error_code ec;
  for (const fs::directory_entry& item : fs::directory_iterator(path, ec)) {
    std::error_code ignored;  // Windows refuses to delete a read-only file
    fs::permissions(item.path(), fs::perms::owner_write, fs::perm_options::add, ignored);
  }
  fs::remove_all(path, ec);
  return !ec && !fs::exists(path, ec);
}

QuarantineOutcome QuarantineEntry(const std::string& root, const std::string& key, const std::string& reason) {
  QuarantineOutcome outcome;
  const fs::path entry = fs::path(root) / key;
  const fs::path folder = fs::path(root) / kQuarantineFolder;
  std::error_code ec;
  fs::create_directories(folder, ec);
  std::string error;
  if (!ec) WriteFileAtomically((entry / kReasonFile).string(), reason + "\n", &error);
  const std::string stamp = UtcStamp(std::chrono::system_clock::now());
  fs::path target = folder / (key + "-" + stamp);
  for (int n = 2; fs::exists(target, ec); ++n) target = folder / (key + "-" + stamp + "-" + std::to_string(n));
  if (!ec) fs::rename(entry, target, ec);
  if (ec) {
    outcome.error = "cannot move it to " + folder.string() + ": " + ec.message() + " (removed instead)";
    RemoveEntryFolder(entry.string());
    return outcome;
  }
  outcome.path = target.string();
  return outcome;
}

std::vector<Quarantined> ListQuarantine(const std::string& root) {
  std::vector<Quarantined> list;
  std::error_code ec;
  for (const fs::directory_entry& item : fs::directory_iterator(fs::path(root) / kQuarantineFolder, ec)) {
    const std::string name = item.path().filename().string();
    if (name.size() < 65 || name[64] != '-') continue;
    Quarantined entry{name, name.substr(0, 64), "", 0};
    std::string text, ignored;
    std::error_code size_error;
    if (fs::file_size(item.path() / kReasonFile, size_error) <= kMaxReasonBytes && !size_error &&
        ReadWholeFile((item.path() / kReasonFile).string(), &text, &ignored)) {
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
      entry.reason = text;
    }
    std::error_code time_error;
    const fs::file_time_type when = fs::last_write_time(item.path(), time_error);
    if (!time_error) entry.when_unix = Clock::FileUnixSeconds(when);
    list.push_back(std::move(entry));
  }
  std::sort(list.begin(), list.end(), [](const Quarantined& a, const Quarantined& b) { return a.when_unix > b.when_unix; });
  return list;
}

}  // namespace trtwatch::cache
