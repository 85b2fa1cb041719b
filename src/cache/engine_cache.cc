#include "cache/engine_cache.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "cache/engine_digests.h"
#include "platform/atomic_file.h"
#include "platform/file_pieces.h"

namespace trtwatch::cache {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kEngineFile = "engine";
constexpr const char* kEntryFile = "entry.json";
constexpr const char* kUsedFile = "used";
constexpr uint64_t kMaxEntryFileBytes = uint64_t{4} << 20;  // a key document is a few KiB
constexpr const char* kStagingPrefix = ".incoming-";
// A store in progress renames its staging folder within seconds (minutes for a huge
// copy): one this old was left by a process that died mid-store.
constexpr auto kAbandonedStaging = std::chrono::hours(24);

bool IsKey(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

int64_t StampOf(const fs::path& path, std::error_code& ec) {
  return static_cast<int64_t>(fs::last_write_time(path, ec).time_since_epoch().count());
}

// A whole small file, or nothing (absent, unreadable, larger than `limit`).
std::optional<std::string> ReadSmallFile(const fs::path& path, uint64_t limit) {
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec || size > limit) return std::nullopt;
  std::string text, ignored;
  if (!ReadWholeFile(path.string(), &text, &ignored)) return std::nullopt;
  return text;
}

json EntryToJson(const CacheEntry& entry, int64_t stamp) {
  json parts = json::array();
  for (const keys::KeyPart& part : entry.parts) parts.push_back({part.name, part.value});
  return {{"format", 1},
          {"key", entry.key},
          {"model", entry.model},
          {"parts", parts},
          {"engine",
           {{"size", entry.size},
            {"sha256", entry.sha256},
            {"fast", {{"algorithm", entry.fast_algorithm}, {"digest", entry.fast_hash}}},
            {"stamp", stamp}}},
          {"built_unix", entry.built_unix},
          {"build_seconds", entry.build_seconds}};
}

// The entry as its file describes it, with the engine's recorded time stamp; nothing
// for a file that is not one (the folder is shared: its contents are untrusted).
std::optional<std::pair<CacheEntry, int64_t>> EntryFromFile(const fs::path& folder) {
  const std::optional<std::string> text = ReadSmallFile(folder / kEntryFile, kMaxEntryFileBytes);
  if (!text) return std::nullopt;
  try {
    const json j = json::parse(*text);
    CacheEntry entry;
    entry.key = j.at("key").get<std::string>();
    entry.model = j.value("model", "");
    for (const json& part : j.at("parts")) entry.parts.push_back({part.at(0).get<std::string>(), part.at(1).get<std::string>()});
    const json& engine = j.at("engine");
    entry.size = engine.at("size").get<uint64_t>();
    entry.sha256 = engine.at("sha256").get<std::string>();
    if (const auto fast = engine.find("fast"); fast != engine.end()) {  // absent in entries stored before it
      entry.fast_algorithm = fast->at("algorithm").get<std::string>();
      entry.fast_hash = fast->at("digest").get<std::string>();
    }
    entry.built_unix = j.at("built_unix").get<double>();
    entry.build_seconds = j.at("build_seconds").get<double>();
    std::error_code ec;
    const fs::file_time_type used = fs::last_write_time(folder / kUsedFile, ec);
    entry.last_used_unix = ec ? entry.built_unix : Clock::FileUnixSeconds(used);
    return std::make_pair(std::move(entry), engine.at("stamp").get<int64_t>());
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool SameParts(const std::vector<keys::KeyPart>& a, const std::vector<keys::KeyPart>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const keys::KeyPart& x, const keys::KeyPart& y) { return x.name == y.name && x.value == y.value; });
}

// Why a stored entry cannot be reused; empty when it can.
std::string Damage(const fs::path& folder, const keys::BuildKey& key) {
  const std::optional<std::pair<CacheEntry, int64_t>> stored = EntryFromFile(folder);
  if (!stored) return "its entry.json is missing or unreadable";
  if (stored->first.key != key.digest || !SameParts(stored->first.parts, key.parts)) {
    return "its key document is not the key it is stored under";
  }
  std::error_code ec;
  const uint64_t size = fs::file_size(folder / kEngineFile, ec);
  if (ec) return "its engine is missing";
  if (size != stored->first.size) {
    return "its engine has " + std::to_string(size) + " bytes, not the " + std::to_string(stored->first.size) + " stored";
  }
  if (StampOf(folder / kEngineFile, ec) != stored->second || ec) return "its engine was modified after it was stored";
  return "";
}

void Touch(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    std::string ignored;
    WriteFileAtomically(path.string(), "", &ignored);
  }
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
}

EngineDigests DigestsOf(const CacheEntry& entry) { return {entry.sha256, entry.fast_hash, entry.fast_algorithm}; }

// Why the engine at `engine` is not `entry`'s; empty when every byte is.
std::string CheckEntryBytes(const CacheEntry& entry, const std::string& engine) {
  EngineHasher hasher(DigestsOf(entry));
  const FilePieces read = ReadFilePieces(engine, [&](std::string_view piece) {
    hasher.Update(piece);
    return true;
  });
  return read.ok ? hasher.Mismatch(read.size, entry.size) : read.error;
}

std::string RandomSuffix() {
  std::random_device random;
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string suffix;
  for (int i = 0; i < 8; ++i) suffix += kAlphabet[random() % (sizeof kAlphabet - 1)];
  return suffix;
}

}  // namespace

std::string PlaceMethodName(PlaceMethod method) {
  switch (method) {
    case PlaceMethod::kReflink:
      return "reflink";
    case PlaceMethod::kCopy:
      return "copy";
  }
  return "copy";
}

EngineCache::EngineCache(std::string folder, CacheLimits limits) : folder_(std::move(folder)), limits_(limits) {}

OpenOutcome EngineCache::Open(const std::string& folder, CacheLimits limits) {
  OpenOutcome outcome;
  if (folder.empty()) {
    outcome.error = "the engine cache needs a folder: --engine-cache DIR or " + std::string(kEngineCacheVariable);
    return outcome;
  }
  const fs::path root = fs::path(folder) / "v1";
  std::error_code ec;
  fs::create_directories(root / "locks", ec);
  if (ec || !fs::is_directory(root / "locks")) {
    outcome.error = "cannot use \"" + folder + "\" as the engine cache: " +
                    (ec ? ec.message() : std::string("not a folder")) + " (give a folder you can write to)";
    return outcome;
  }
  outcome.cache.reset(new EngineCache(root.string(), limits));
  return outcome;
}

std::string EngineCache::EntryPath(const std::string& key) const { return (fs::path(folder_) / key).string(); }

std::unique_ptr<FileLock> EngineCache::LockKey(const std::string& key, const std::function<void(long)>& on_wait,
                                               std::string* error) {
  const std::string path = (fs::path(folder_) / "locks" / (key + ".lock")).string();
  TryLockResult tried = FileLock::TryAcquire(path);
  if (tried.outcome == TryLockResult::Outcome::kAcquired) return std::move(tried.lock);
  if (tried.outcome == TryLockResult::Outcome::kError) {
    *error = tried.error;
    return nullptr;
  }
  if (on_wait) on_wait(tried.holder_pid);
  return FileLock::Acquire(path, error);
}

Lookup EngineCache::Find(const keys::BuildKey& key) {
  Lookup lookup;
  const fs::path folder = EntryPath(key.digest);
  std::error_code ec;
  if (!fs::exists(folder, ec)) return lookup;
  const std::string damage = Damage(folder, key);
  if (!damage.empty()) {
    lookup.warning = MoveAside(key.digest, damage);
    return lookup;
  }
  lookup.outcome = Lookup::Outcome::kHit;
  lookup.entry = EntryFromFile(folder)->first;
  return lookup;
}

std::string EngineCache::MoveAside(const std::string& key, const std::string& damage) {
  const QuarantineOutcome moved = QuarantineEntry(folder_, key, damage);
  return "the cached engine for key " + key.substr(0, 12) + " was damaged (" + damage + "): " +
         (moved.path.empty() ? moved.error : "quarantined in " + moved.path) + "; treated as a miss";
}

namespace {

// What placing a hit found: why the placed bytes are not the entry's (`damage`), or why
// they could not be placed (`error`: the output's folder, a full disk); both empty: good.
struct PlacedBytes {
  std::string damage;
  std::string error;
};

// Reads the placed file back as far as `end` into `hasher`; its error, or empty.
std::string CheckPlacedTo(FileFollower* placed, EngineHasher* hasher, uint64_t end) {
  return placed->ReadTo(end, [hasher](std::string_view piece) { hasher->Update(piece); }) ? "" : placed->error();
}

// Where the kernel cannot copy (the output on another file system): the entry read
// once, each piece hashed and written from the same buffer, so the bytes checked are
// the bytes written.
PlacedBytes CopyThroughBufferChecked(const CacheEntry& entry, const std::string& engine, AtomicFile* file) {
  PlacedBytes result;
  EngineHasher hasher(DigestsOf(entry));
  const FilePieces read = ReadFilePieces(engine, [&](std::string_view piece) {
    hasher.Update(piece);
    return file->Write(piece.data(), piece.size(), &result.error);
  });
  if (read.stopped) return result;  // the output could not be written: `error` says why
  result.damage = read.ok ? hasher.Mismatch(read.size, entry.size) : read.error;
  return result;
}

// Copies the entry's engine into `file` (the kernel copies: copy_file_range) and checks
// the bytes placed, each piece read back from the output and hashed while the kernel
// copies the next (one piece at a time in another thread: the copy and the check
// overlap; each task starts after the previous one's get(), so the follower and the
// hasher are used by one thread at a time).
PlacedBytes CopyAndCheckPlaced(const CacheEntry& entry, const std::string& engine, AtomicFile* file) {
  PlacedBytes result;
  FileFollower placed(file->temp_path());
  EngineHasher hasher(DigestsOf(entry));
  std::string read_error = placed.error();
  std::future<std::string> checking;
  const auto finish_check = [&] {
    if (!checking.valid()) return;
    const std::string error = checking.get();
    if (read_error.empty()) read_error = error;
  };
  const CopiedPieces copied = file->CopyPieces(
      engine,
      [&](uint64_t bytes) {
        finish_check();
        if (!read_error.empty()) return;
        checking = std::async(std::launch::async, CheckPlacedTo, &placed, &hasher, bytes);
      },
      /*kernel_only=*/true);
  finish_check();
  if (copied.declined) return CopyThroughBufferChecked(entry, engine, file);
  if (!copied.ok) {
    // The entry's own bytes unreadable is damage; anything else is the output's problem.
    result.damage = CheckEntryBytes(entry, engine);
    result.error = result.damage.empty() ? copied.error : "";
    return result;
  }
  if (read_error.empty() && placed.offset() != copied.bytes) read_error = "not every byte placed was read back";
  if (!read_error.empty()) return result.error = "cannot read back the placed engine: " + read_error, result;
  result.damage = hasher.Mismatch(copied.bytes, entry.size);
  return result;
}

// A reflinked engine shares the entry's blocks: they are read back, every byte checked.
PlacedBytes CheckShared(const CacheEntry& entry, const std::string& placed) {
  PlacedBytes result;
  result.damage = CheckEntryBytes(entry, placed);
  return result;
}

}  // namespace

PlaceOutcome EngineCache::Place(const CacheEntry& entry, const std::string& output) {
  PlaceOutcome outcome;
  const std::string engine = EnginePath(entry);
  std::unique_ptr<AtomicFile> file = AtomicFile::Create(output, &outcome.error);
  if (!file) return outcome;
  // Either way the bytes checked are the placed file's own, read back.
  const PlaceMethod method = file->ShareFrom(engine) ? PlaceMethod::kReflink : PlaceMethod::kCopy;
  const PlacedBytes placed = method == PlaceMethod::kReflink ? CheckShared(entry, file->temp_path())
                                                             : CopyAndCheckPlaced(entry, engine, file.get());
  if (!placed.error.empty()) {
    outcome.error = placed.error;
    return outcome;  // the temporary file goes with `file`: nothing placed
  }
  if (!placed.damage.empty()) {
    file.reset();  // the output is left as it was
    outcome.damaged = true;
    outcome.error = MoveAside(entry.key, placed.damage);
    return outcome;
  }
  if (!file->Commit(&outcome.error)) return outcome;
  outcome.method = method;
  CountHit(entry);
  return outcome;
}

ReadOutcome EngineCache::Read(const CacheEntry& entry) {
  ReadOutcome outcome;
  std::vector<char> bytes;
  bytes.reserve(static_cast<size_t>(entry.size));
  EngineHasher hasher(DigestsOf(entry));
  const FilePieces read = ReadFilePieces(EnginePath(entry), [&](std::string_view piece) {
    if (bytes.size() + piece.size() > entry.size) return false;  // longer than stored: damaged
    hasher.Update(piece);
    bytes.insert(bytes.end(), piece.begin(), piece.end());
    return true;
  });
  const std::string damage = read.stopped ? "its engine is longer than the " + std::to_string(entry.size) + " bytes stored"
                             : read.ok    ? hasher.Mismatch(read.size, entry.size)
                                          : read.error;
  if (!damage.empty()) {
    outcome.warning = MoveAside(entry.key, damage);
    return outcome;
  }
  outcome.bytes = std::move(bytes);
  CountHit(entry);
  return outcome;
}

std::string EngineCache::Verify(const CacheEntry& entry) {
  const std::string damage = CheckEntryBytes(entry, EnginePath(entry));
  return damage.empty() ? "" : MoveAside(entry.key, damage);
}

namespace {

// How many entries `cache verify` hashes at once: each is one core's read and hash.
size_t ParallelChecks() { return std::clamp<size_t>(std::thread::hardware_concurrency() / 2, 1, 8); }

}  // namespace

std::vector<EntryCheck> EngineCache::CheckAll(bool repair) {
  std::vector<EntryCheck> checks;
  std::error_code ec;
  for (const fs::directory_entry& item : fs::directory_iterator(folder_, ec)) {
    const std::string name = item.path().filename().string();
    if (!IsKey(name)) continue;
    EntryCheck check;
    const std::optional<std::pair<CacheEntry, int64_t>> stored = EntryFromFile(item.path());
    check.entry.key = name;
    if (!stored || stored->first.key != name) {
      check.damage = "its entry.json is missing, unreadable or not this key's";
    } else {
      check.entry = stored->first;
    }
    checks.push_back(std::move(check));
  }
  std::sort(checks.begin(), checks.end(), [](const EntryCheck& a, const EntryCheck& b) { return a.entry.key < b.entry.key; });
  // Every byte of every entry, ParallelChecks() entries at a time: each task writes its
  // own check's damage only, and is joined (get) before the checks are read again.
  std::vector<std::future<void>> running;
  for (EntryCheck& check : checks) {
    if (!check.damage.empty()) continue;
    if (running.size() == ParallelChecks()) {
      running.front().get();
      running.erase(running.begin());
    }
    running.push_back(std::async(std::launch::async, [this, &check] {
      check.damage = CheckEntryBytes(check.entry, EnginePath(check.entry));
    }));
  }
  for (std::future<void>& task : running) task.get();
  if (repair) {
    for (EntryCheck& check : checks) {
      if (!check.damage.empty()) Repair(&check);
    }
  }
  return checks;
}

void EngineCache::Repair(EntryCheck* check) {
  const TryLockResult lock = FileLock::TryAcquire((fs::path(folder_) / "locks" / (check->entry.key + ".lock")).string());
  if (lock.outcome != TryLockResult::Outcome::kAcquired) {
    check->error = "a build of it holds its lock: not quarantined (run verify --repair again later)";
    return;
  }
  const QuarantineOutcome moved = QuarantineEntry(folder_, check->entry.key, check->damage);
  check->quarantined = moved.path;
  check->error = moved.error;
}

std::vector<Quarantined> EngineCache::Quarantine() const { return ListQuarantine(folder_); }

void EngineCache::CountHit(const CacheEntry& entry) {
  Touch(fs::path(EntryPath(entry.key)) / kUsedFile);
  AddToStats(1, 0, entry.size, entry.build_seconds);
}

std::string EngineCache::EnginePath(const CacheEntry& entry) const {
  return (fs::path(EntryPath(entry.key)) / kEngineFile).string();
}

StoreOutcome EngineCache::Keep(const keys::BuildKey& key, const std::string& model, double build_seconds,
                               const FillEngine& fill) {
  StoreOutcome outcome;
  AddToStats(0, 1, 0, 0);
  // Everything in a folder of its own, renamed into place whole.
  const fs::path staging = fs::path(folder_) / (kStagingPrefix + key.digest.substr(0, 16) + "-" + RandomSuffix());
  std::error_code ec;
  fs::create_directory(staging, ec);
  if (ec) {
    outcome.error = "cannot write in the engine cache \"" + folder_ + "\": " + ec.message();
    return outcome;
  }
  const auto fail = [&](const std::string& error) {
    RemoveEntryFolder(staging.string());
    outcome.error = error;
    return outcome;
  };
  std::string error;
  std::unique_ptr<AtomicFile> file = AtomicFile::Create((staging / kEngineFile).string(), &error);
  if (!file) return fail(error);
  EngineHasher hasher;
  uint64_t size = 0;
  if (!fill(*file, hasher, &size, &error) || !file->Commit(&error)) return fail(error);
  MakeReadOnly((staging / kEngineFile).string());
  const int64_t stamp = StampOf(staging / kEngineFile, ec);
  const EngineDigests digests = hasher.Final();
  CacheEntry entry{key.digest,  model, key.parts, size, digests.sha256, digests.fast, digests.fast_algorithm,
                   Clock::SystemUnixSeconds(),   build_seconds, Clock::SystemUnixSeconds()};
  if (!WriteFileAtomically((staging / kEntryFile).string(), EntryToJson(entry, stamp).dump(1), &error) ||
      !WriteFileAtomically((staging / kUsedFile).string(), "", &error)) {
    return fail(error);
  }
  const fs::path final_path = EntryPath(key.digest);
  RemoveEntryFolder(final_path.string());  // one a crash left half removed
  fs::rename(staging, final_path, ec);
  if (ec) return fail("cannot put the entry in place in the engine cache: " + ec.message());
  outcome.stored = true;
  outcome.pruned = Prune(limits_, key.digest);
  return outcome;
}

StoreOutcome EngineCache::Store(const keys::BuildKey& key, const std::string& model, const std::string& engine_path,
                                double build_seconds) {
  std::error_code ec;
  const uint64_t size = fs::file_size(engine_path, ec);
  if (ec || size > limits_.max_bytes) {
    AddToStats(0, 1, 0, 0);
    return StoreOutcome{false,
                        ec ? "the engine \"" + engine_path + "\" cannot be read: " + ec.message()
                           : "the engine has " + std::to_string(size) + " bytes, more than the cache's limit of " +
                                 std::to_string(limits_.max_bytes) + ": not kept (raise --engine-cache-max-size)",
                        {}};
  }
  // A reflink or a copy, never a link: the build's output must not share the entry's file.
  return Keep(key, model, build_seconds, [&](AtomicFile& file, EngineHasher& hasher, uint64_t* stored, std::string* error) {
    const bool shared = file.ShareFrom(engine_path);
    const FilePieces read = ReadFilePieces(engine_path, [&](std::string_view piece) {
      hasher.Update(piece);
      return shared || file.Write(piece.data(), piece.size(), error);
    });
    if (!read.ok && !read.stopped) *error = "the engine cannot be read: " + read.error;
    *stored = read.size;
    return read.ok;
  });
}

StoreOutcome EngineCache::StoreBytes(const keys::BuildKey& key, const std::string& model, std::string_view plan,
                                     double build_seconds) {
  if (plan.size() > limits_.max_bytes) {
    AddToStats(0, 1, 0, 0);
    return StoreOutcome{false, "the plan has " + std::to_string(plan.size()) + " bytes, more than the cache's limit of " +
                                   std::to_string(limits_.max_bytes) + ": not kept (raise max_bytes)", {}};
  }
  return Keep(key, model, build_seconds, [&](AtomicFile& file, EngineHasher& hasher, uint64_t* stored, std::string* error) {
    hasher.Update(plan);
    *stored = plan.size();
    return file.Write(plan.data(), plan.size(), error);
  });
}

void EngineCache::CountMiss() { AddToStats(0, 1, 0, 0); }

std::vector<CacheEntry> EngineCache::List() const {
  std::vector<CacheEntry> entries;
  std::error_code ec;
  for (const fs::directory_entry& item : fs::directory_iterator(folder_, ec)) {
    const std::string name = item.path().filename().string();
    if (!IsKey(name)) continue;
    if (std::optional<std::pair<CacheEntry, int64_t>> stored = EntryFromFile(item.path())) {
      if (stored->first.key == name) entries.push_back(std::move(stored->first));
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const CacheEntry& a, const CacheEntry& b) { return a.last_used_unix > b.last_used_unix; });
  return entries;
}

std::optional<CacheEntry> EngineCache::Recorded(const std::string& key) const {
  if (!IsKey(key)) return std::nullopt;
  std::optional<std::pair<CacheEntry, int64_t>> stored = EntryFromFile(EntryPath(key));
  if (!stored || stored->first.key != key) return std::nullopt;
  return std::move(stored->first);
}

CacheStats EngineCache::Stats() const {
  CacheStats stats;
  for (const CacheEntry& entry : List()) {
    ++stats.entries;
    stats.bytes += entry.size;
  }
  if (std::optional<std::string> text = ReadSmallFile(fs::path(folder_) / "stats.json", kMaxEntryFileBytes)) {
    try {
      const json j = json::parse(*text);
      stats.hits = j.value("hits", uint64_t{0});
      stats.misses = j.value("misses", uint64_t{0});
      stats.bytes_reused = j.value("bytes_reused", uint64_t{0});
      stats.seconds_saved = j.value("seconds_saved", 0.0);
    } catch (const std::exception&) {
      // Damaged counters start again from zero; the entries are what matter.
    }
  }
  return stats;
}

void EngineCache::AddToStats(uint64_t hits, uint64_t misses, uint64_t bytes_reused, double seconds_saved) {
  std::string error;
  const std::unique_ptr<FileLock> lock = FileLock::Acquire((fs::path(folder_) / "locks" / "stats.lock").string(), &error);
  if (!lock) return;  // counters are best effort: a build never fails over them
  CacheStats stats = Stats();
  const json j = {{"hits", stats.hits + hits},
                  {"misses", stats.misses + misses},
                  {"bytes_reused", stats.bytes_reused + bytes_reused},
                  {"seconds_saved", stats.seconds_saved + seconds_saved}};
  WriteFileAtomically((fs::path(folder_) / "stats.json").string(), j.dump(), &error);
}

std::vector<std::string> EngineCache::Remove(const std::string& prefix) {
  std::vector<std::string> removed;
  if (prefix.size() < 4 || prefix.find_first_not_of("0123456789abcdef") != std::string::npos) return removed;
  for (const CacheEntry& entry : List()) {
    if (entry.key.compare(0, prefix.size(), prefix) != 0) continue;
    const TryLockResult lock = FileLock::TryAcquire((fs::path(folder_) / "locks" / (entry.key + ".lock")).string());
    if (lock.outcome != TryLockResult::Outcome::kAcquired) continue;  // a build of it is running
    if (RemoveEntryFolder(EntryPath(entry.key))) removed.push_back(entry.key);
  }
  return removed;
}

void EngineCache::RemoveAbandonedStaging() {
  std::error_code ec;
  const fs::file_time_type cutoff = fs::file_time_type::clock::now() - kAbandonedStaging;
  for (const fs::directory_entry& item : fs::directory_iterator(folder_, ec)) {
    if (item.path().filename().string().rfind(kStagingPrefix, 0) != 0) continue;
    std::error_code time_error;
    if (fs::last_write_time(item.path(), time_error) < cutoff && !time_error) RemoveEntryFolder(item.path().string());
  }
}

std::vector<std::string> EngineCache::Prune(const CacheLimits& limits, const std::string& keep) {
  RemoveAbandonedStaging();
  std::vector<std::string> removed;
  uint64_t count = 0, bytes = 0;
  for (const CacheEntry& entry : List()) {  // newest first: the oldest pass the bounds
    if (entry.key == keep || (count + 1 <= limits.max_entries && bytes + entry.size <= limits.max_bytes)) {
      ++count;
      bytes += entry.size;
      continue;
    }
    const TryLockResult lock = FileLock::TryAcquire((fs::path(folder_) / "locks" / (entry.key + ".lock")).string());
    if (lock.outcome == TryLockResult::Outcome::kAcquired && RemoveEntryFolder(EntryPath(entry.key))) {
      removed.push_back(entry.key);
    } else {
      ++count;
      bytes += entry.size;
    }
  }
  return removed;
}

}  // namespace trtwatch::cache
