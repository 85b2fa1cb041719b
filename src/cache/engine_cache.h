// EngineCache: engines kept by build key (docs/cache.md), in a folder any number of
// processes share: `trtwatch build --engine-cache DIR`, the service's workers, two
// replicas on one artifact dir.
//
//   DIR/v1/<key>/engine       the engine, read-only (0444)
//   DIR/v1/<key>/entry.json   the key document, the engine's size, SHA-256, fast hash
//                             (XXH3-128) and time stamp, when it was built and how
//                             long that took
//   DIR/v1/<key>/used         touched on every hit: least recently used goes first
//   DIR/v1/locks/<key>.lock   held while a build of that key runs (one builds, the
//                             others wait, then reuse)
//   DIR/v1/stats.json         hits, misses, bytes and build time reused
//   DIR/v1/quarantine/        damaged entries moved aside (cache/quarantine.h)
//
// An entry appears whole or not at all (written in a folder of its own, renamed into
// place). Find checks that the entry's key document is the key asked for and that the
// engine still has the size and time stamp it was stored with; a hit's every byte is
// then checked against the recorded digest: a placed engine's bytes as placed (read
// back from the output, each piece while the kernel copies the next), a read one's as
// read. Anything wrong is a miss with a warning naming where the entry was
// quarantined, and nothing placed. A hit places the engine at the output by a reflink
// where the file system can, else a copy (copy_file_range), atomically: never a hard
// link, so a placed engine never shares its file with the cache and damage to one
// cannot spread to the other.
//
// Threading: an EngineCache is used by one thread; processes and threads with their
// own objects exclude each other through the key's lock file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/quarantine.h"
#include "keys/build_key.h"
#include "platform/file_lock.h"

namespace trtwatch {
class AtomicFile;
}

namespace trtwatch::cache {

class EngineHasher;

// Least recently used entries go once either bound is passed.
struct CacheLimits {
  uint64_t max_bytes = uint64_t{100} << 30;  // 100 GiB
  uint64_t max_entries = 1000;
};

struct CacheEntry {
  std::string key;    // the digest
  std::string model;  // what build_start named, for `cache ls`
  std::vector<keys::KeyPart> parts;
  uint64_t size = 0;  // the engine's bytes
  std::string sha256;  // the engine's, when it was stored
  std::string fast_hash;       // its fast hash (FastHash), when stored; empty in older entries
  std::string fast_algorithm;  // which fast hash ("xxh3-128")
  double built_unix = 0;      // when it was stored (Unix seconds)
  double build_seconds = 0;   // how long its build took
  double last_used_unix = 0;  // the latest hit, or the store
};

struct CacheStats {
  uint64_t entries = 0;
  uint64_t bytes = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t bytes_reused = 0;    // engine bytes placed by hits
  double seconds_saved = 0;     // the build time of every engine reused
};

// What Find answered.
struct Lookup {
  enum class Outcome { kHit, kMiss };
  Outcome outcome = Outcome::kMiss;
  std::optional<CacheEntry> entry;  // kHit
  std::string warning;              // a damaged entry that was quarantined (then kMiss)
};

// How a hit's engine reached the output: never a hard link (see above).
enum class PlaceMethod { kReflink, kCopy };
std::string PlaceMethodName(PlaceMethod method);

struct PlaceOutcome {
  std::optional<PlaceMethod> method;  // absent on error
  std::string error;  // nothing placed: why (damaged: the warning naming the quarantine)
  bool damaged = false;  // the engine's bytes were not the ones stored: quarantined, a miss
};

// A hit's bytes, each checked against the entry's digest.
struct ReadOutcome {
  std::optional<std::vector<char>> bytes;  // absent: damaged (quarantined) or unreadable
  std::string warning;                     // why absent
};

// What checking every byte of an entry found (`trtwatch cache verify`).
struct EntryCheck {
  CacheEntry entry;
  std::string damage;       // empty: good
  std::string quarantined;  // repair: where the damaged entry went
  std::string error;        // repair: why it could not be quarantined (a build of it runs)
};

struct StoreOutcome {
  bool stored = false;
  std::string error;           // why nothing was stored
  std::vector<std::string> pruned;  // keys removed to stay within the limits
};

// Opening the cache: its folder (created if absent) or why it cannot be used.
class EngineCache;
struct OpenOutcome {
  std::unique_ptr<EngineCache> cache;
  std::string error;
};

class EngineCache {
 public:
  static OpenOutcome Open(const std::string& folder, CacheLimits limits = {});

  // Holds the key's lock until the returned object goes: a build of that key in
  // another process waits meanwhile. `on_wait` is called once, before blocking, when
  // another process holds it (with its PID, 0 if unknown).
  std::unique_ptr<FileLock> LockKey(const std::string& key, const std::function<void(long)>& on_wait,
                                    std::string* error);

  // The entry of `key`, checked (hold the key's lock).
  Lookup Find(const keys::BuildKey& key);
  // Puts a hit's engine at `output`, atomically, checking every byte placed (read back
  // from the output), and counts the hit. Damaged bytes: nothing placed, the entry quarantined (hold the
  // key's lock), `damaged` set; the caller builds, as for a miss.
  [[nodiscard]] PlaceOutcome Place(const CacheEntry& entry, const std::string& output);
  // A hit's bytes, checked, for the caller to keep (the library's Get); a damaged entry
  // is quarantined (hold the key's lock) and the hit is not counted.
  [[nodiscard]] ReadOutcome Read(const CacheEntry& entry);
  // Checks every byte of a hit the caller reads in place (the library's Find): empty
  // when good, else the warning, and the entry is quarantined (hold the key's lock).
  [[nodiscard]] std::string Verify(const CacheEntry& entry);
  // Checks every entry's every byte (several entries at once, a core each), by key;
  // `repair` quarantines the damaged ones (not one whose build holds its key's lock:
  // `error` says so).
  std::vector<EntryCheck> CheckAll(bool repair);
  // The damaged entries moved aside, newest first.
  std::vector<Quarantined> Quarantine() const;
  // Keeps the engine at `engine_path` (a build of `key` just wrote it) and counts the
  // miss, then removes the least recently used entries past the limits (never the
  // new one, nor one whose key is locked). Hold the key's lock.
  StoreOutcome Store(const keys::BuildKey& key, const std::string& model, const std::string& engine_path,
                     double build_seconds);
  // The same for a plan in memory (the library's EngineCache::Put): written to a file
  // of the cache's own first, so the entry is placed exactly as a file's is.
  StoreOutcome StoreBytes(const keys::BuildKey& key, const std::string& model, std::string_view plan,
                          double build_seconds);
  // A miss that stored nothing (the build failed or was cancelled) still counts.
  void CountMiss();
  // A hit whose engine the caller reads in place (the library's Find and Get): keeps
  // the entry recently used and counts the hit.
  void CountHit(const CacheEntry& entry);
  // Where a stored entry's engine is (read it, never write it: it is the cache's own).
  std::string EnginePath(const CacheEntry& entry) const;

  std::vector<CacheEntry> List() const;  // most recently used first
  // The entry stored for the key digest `key` as its entry.json records it (its size and
  // SHA-256 as they were when stored), unchecked against the engine's bytes; nothing
  // when there is none. The service takes a placed engine's digest from it.
  std::optional<CacheEntry> Recorded(const std::string& key) const;
  CacheStats Stats() const;
  // Removes the entries whose key starts with `prefix` (at least 4 hex digits); the
  // keys removed.
  std::vector<std::string> Remove(const std::string& prefix);
  // Removes least recently used entries until `limits` hold, and what a store that
  // died left behind a day ago or more; the keys removed.
  std::vector<std::string> Prune(const CacheLimits& limits, const std::string& keep = "");

  const std::string& folder() const { return folder_; }

 private:
  explicit EngineCache(std::string folder, CacheLimits limits);
  std::string EntryPath(const std::string& key) const;
  void AddToStats(uint64_t hits, uint64_t misses, uint64_t bytes_reused, double seconds_saved);
  void RemoveAbandonedStaging();
  // Puts an engine in the cache: `fill` writes it to the staging file and hashes it.
  using FillEngine = std::function<bool(AtomicFile& file, EngineHasher& hasher, uint64_t* size, std::string* error)>;
  StoreOutcome Keep(const keys::BuildKey& key, const std::string& model, double build_seconds, const FillEngine& fill);
  // verify --repair: quarantines a damaged entry unless a build of it holds its lock.
  void Repair(EntryCheck* check);
  // Quarantines `entry` for `damage`; the warning that says so.
  std::string MoveAside(const std::string& key, const std::string& damage);

  const std::string folder_;  // DIR/v1
  const CacheLimits limits_;
};

// The fix for a cache folder given wrongly, and where the cache lives by default:
// --engine-cache DIR, else TRTWATCH_ENGINE_CACHE, else none.
inline constexpr const char* kEngineCacheVariable = "TRTWATCH_ENGINE_CACHE";

}  // namespace trtwatch::cache
