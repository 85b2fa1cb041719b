#include "runner/timing_cache_folder.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <system_error>

#include "backends/simulated/timing_cache.h"
#include "backends/timing_cache_use.h"
#include "core/clock.h"
#include "platform/atomic_file.h"
#include "platform/state_folder.h"
#include "platform/utf8_edges.h"

namespace trtwatch {

namespace {

namespace fs = std::filesystem;

constexpr char kSuffix[] = ".cache";
constexpr uint64_t kMaxInspected = uint64_t{64} << 20;  // a simulated cache's bound

double ModifiedUnix(const fs::path& path) {
  std::error_code ec;
  const fs::file_time_type when = fs::last_write_time(path, ec);
  if (ec) return 0;
  return Clock::FileUnixSeconds(when);
}

// What a simulated cache says of itself; TensorRT's caches are opaque here.
void Inspect(const std::string& path, TimingCacheFile* file) {
  if (file->size > kMaxInspected) return;
  std::string text;
  std::string error;
  if (!ReadWholeFile(path, &text, &error)) return;
  const Result<sim::TimingCacheData> cache = sim::ParseTimingCache(text);
  if (!cache.ok()) return;
  file->entries = static_cast<int64_t>(cache->entries.size());
  file->gpu = cache->maker.gpu;
}

// The counts its builds keep beside it; their names where they gave them.
void AddUse(const std::string& path, TimingCacheFile* file) {
  const TimingCacheUse use = ReadTimingCacheUse(path);
  file->served = use.served;
  file->contributed = use.contributed;
  file->builder = use.builder;
  if (!use.gpu.empty()) file->gpu = use.gpu;
}

}  // namespace

bool IsTimingCacheName(std::string_view name) {
  const std::string_view suffix = kSuffix;
  if (name.size() <= suffix.size() || name.size() > 255 || !name.ends_with(suffix)) return false;
  if (name[0] == '.' || name[0] == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
  });
}

Result<std::string> AutoTimingCacheFolder(const EnvLookup& env) {
  const StateFolder state = UserStateFolder([&](std::string_view name) { return env(name); });
  if (state.path.empty()) return Status::Error("--timing-cache auto: " + state.error);
  return state.path + "/timing-caches";
}

std::vector<TimingCacheFile> ListTimingCaches(const std::string& folder) {
  std::vector<TimingCacheFile> files;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(Utf8Path(folder), ec)) {
    const std::u8string utf8 = entry.path().filename().u8string();
    const std::string name(utf8.begin(), utf8.end());
    if (!IsTimingCacheName(name) || !entry.is_regular_file(ec)) continue;
    TimingCacheFile file{name, entry.file_size(ec), ModifiedUnix(entry.path())};
    Inspect(folder + "/" + name, &file);
    AddUse(folder + "/" + name, &file);
    files.push_back(std::move(file));
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return files;
}

Status RemoveTimingCache(const std::string& folder, const std::string& name) {
  if (!IsTimingCacheName(name)) {
    return Status::Error("\"" + name + "\" is not a timing cache's name; `trtwatch timing-cache ls` lists them");
  }
  std::error_code ec;
  if (fs::remove(Utf8Path(folder + "/" + name), ec)) {
    fs::remove(Utf8Path(TimingCacheUseFile(folder + "/" + name)), ec);  // its counts go with it
    return OkStatus();
  }
  if (ec) return Status::Error("cannot remove \"" + folder + "/" + name + "\": " + ec.message());
  return Status::Error("no timing cache \"" + name + "\" in " + folder + "; `trtwatch timing-cache ls` lists them");
}

}  // namespace trtwatch
