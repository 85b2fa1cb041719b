// What a folder's timing cache has done for its builds: the builder and GPU it belongs
// to, how many builds were given it and how many merged what they learnt into it. Kept
// beside the cache, as "NAME.cache.use" (JSON), for `trtwatch timing-cache ls` and the
// service's GET /timing-caches; a cache's last merge is its file's modification time.
//
// Only the caches of a folder (--timing-cache auto, the service's fleet caches) keep
// one; a cache file a user names is theirs alone.
//
// Threading: the functions read and write the file system; RecordTimingCacheUse runs
// under the cache's lock (backends/timing_cache_file.h), so counts are never lost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trtwatch {

// The cache file as its last merge wrote it: a reader whose file still has this size
// and modification time has these bytes, without hashing them again.
struct CacheVersion {
  std::string sha256;  // hex
  uint64_t size = 0;
  int64_t modified = 0;  // the file's modification time, in the file clock's ticks
  bool operator==(const CacheVersion&) const = default;
};

struct TimingCacheUse {
  std::string builder;  // "TensorRT 10.16.0", "trtwatch simulator 1"
  std::string gpu;      // "NVIDIA H100 80GB HBM3 sm 9.0"
  int64_t served = 0;       // builds given the cache
  int64_t contributed = 0;  // builds whose timings were merged into it
  std::optional<CacheVersion> version;  // as the last merge wrote it
};

// The size and modification time of `path` (no digest); nullopt where it cannot be read.
std::optional<CacheVersion> FileVersion(const std::string& path);

// The sidecar of the cache file `cache_file`.
std::string TimingCacheUseFile(const std::string& cache_file);

// The cache's use; all zero (and no names) where it has none or it is unreadable: the
// counts are a report, never a reason to refuse a cache.
TimingCacheUse ReadTimingCacheUse(const std::string& cache_file);

enum class CacheUseEvent { kServed, kContributed };
// Counts one `event` for the cache of `builder` on `gpu` (names longer than 200
// characters are cut); for kContributed, `written` is what the merge just wrote to
// the file (its version is kept). The caller holds the cache's lock. A failure is the
// caller's warning (the return: empty, or why the count was not kept).
[[nodiscard]] std::string RecordTimingCacheUse(const std::string& cache_file, std::string_view builder,
                                               std::string_view gpu, CacheUseEvent event,
                                               std::string_view written = {});

}  // namespace trtwatch
