#include "builds/fleet_timing_caches.h"

#include <filesystem>
#include <memory>
#include <system_error>

#include "backends/timing_cache_file.h"
#include "backends/timing_cache_use.h"
#include "platform/file_access.h"
#include "platform/file_lock.h"
#include "platform/sha256.h"
#include "platform/utf8_edges.h"

namespace trtwatch::builds {

namespace {

namespace fs = std::filesystem;

constexpr char kBusyError[] = " is being merged by a build that just ended: retry in a second";

// A link to the cache's current file (a copy where the file system has no links).
bool LinkOrCopy(const std::string& from, const std::string& to, std::string* error) {
  std::error_code ec;
  fs::remove(Utf8Path(to), ec);
  fs::create_hard_link(Utf8Path(from), Utf8Path(to), ec);
  if (ec) fs::copy_file(Utf8Path(from), Utf8Path(to), ec);
  if (ec) *error = "cannot snapshot \"" + from + "\": " + ec.message();
  return !ec;
}

// The digest the last merge recorded, where the file is still the one it wrote.
std::string RecordedSha256(const std::string& cache, const CacheVersion& now) {
  const TimingCacheUse use = ReadTimingCacheUse(cache);
  if (!use.version || use.version->size != now.size || use.version->modified != now.modified) return "";
  return use.version->sha256;
}

}  // namespace

std::vector<TimingCacheFile> FleetTimingCaches::List() const {
  return enabled() ? ListTimingCaches(dir_) : std::vector<TimingCacheFile>{};
}

std::string FleetTimingCaches::NotFoundError(std::string_view name) const {
  if (!enabled()) return "this service keeps no timing caches (it runs with --no-timing-caches)";
  return "no timing cache \"" + std::string(name) + "\"; GET /timing-caches lists them";
}

FleetTimingCaches::Download FleetTimingCaches::Snapshot(std::string_view name) const {
  if (!enabled() || !IsTimingCacheName(name)) return {Outcome::kNotFound, "", {}, NotFoundError(name)};
  const std::string cache = dir_ + "/" + std::string(name);
  const TryLockResult lock = FileLock::TryAcquire(TimingCacheLockFile(cache));
  if (lock.outcome == TryLockResult::Outcome::kHeld) {
    return {Outcome::kBusy, "", {}, "timing cache \"" + std::string(name) + "\"" + kBusyError};
  }
  if (lock.outcome != TryLockResult::Outcome::kAcquired) return {Outcome::kFailed, "", {}, lock.error};
  const std::optional<CacheVersion> now = FileVersion(cache);
  if (!now) return {Outcome::kNotFound, "", {}, NotFoundError(name)};
  std::string error;
  if (!MakePrivateFolder(snapshot_dir(), &error)) return {Outcome::kFailed, "", {}, error};
  const std::string part = snapshot_dir() + "/" + std::string(name) + ".part";
  if (!LinkOrCopy(cache, part, &error)) return {Outcome::kFailed, "", {}, error};
  std::string sha256 = RecordedSha256(cache, *now);
  if (sha256.empty()) {
    const FileSha256 hashed = Sha256OfFile(part);
    if (!hashed.digest) return {Outcome::kFailed, "", {}, hashed.error};
    sha256 = HexOf(*hashed.digest);
  }
  const std::string snapshot = snapshot_dir() + "/" + std::string(name) + "." + sha256;
  std::error_code ec;
  fs::rename(Utf8Path(part), Utf8Path(snapshot), ec);
  if (ec) return {Outcome::kFailed, "", {}, "cannot keep a snapshot of \"" + cache + "\": " + ec.message()};
  PruneSnapshots(std::string(name), snapshot);
  return {Outcome::kDone, snapshot, StoredFile{std::string(name), now->size, sha256}, ""};
}

FleetTimingCaches::Removal FleetTimingCaches::Remove(std::string_view name) const {
  if (!enabled() || !IsTimingCacheName(name)) return {Outcome::kNotFound, NotFoundError(name)};
  const std::string cache = dir_ + "/" + std::string(name);
  const TryLockResult lock = FileLock::TryAcquire(TimingCacheLockFile(cache));
  if (lock.outcome == TryLockResult::Outcome::kHeld) {
    return {Outcome::kBusy, "timing cache \"" + std::string(name) + "\"" + kBusyError};
  }
  if (lock.outcome != TryLockResult::Outcome::kAcquired) return {Outcome::kFailed, lock.error};
  if (!FileVersion(cache)) return {Outcome::kNotFound, NotFoundError(name)};
  if (const Status removed = RemoveTimingCache(dir_, std::string(name)); !removed.ok()) {
    return {Outcome::kFailed, removed.error()};
  }
  PruneSnapshots(std::string(name), "");
  return {Outcome::kDone, ""};
}

void FleetTimingCaches::PruneSnapshots(const std::string& name, const std::string& keep) const {
  // Downloads in flight hold their snapshot open: removing its name does not stop them.
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(Utf8Path(snapshot_dir()), ec)) {
    const std::u8string utf8 = entry.path().filename().u8string();
    const std::string file(utf8.begin(), utf8.end());
    const bool version = file.size() == name.size() + 65 && file.starts_with(name + ".");
    if (version && snapshot_dir() + "/" + file != keep) fs::remove(entry.path(), ec);
  }
}

}  // namespace trtwatch::builds
