// The --timing-cache FILE rules every builder shares (trtexec's semantics): the file
// is loaded if present and a new cache started if not; a cache the builder cannot read,
// or one made on another GPU or version, is used anyway with a warning or refused
// (--timing-cache-strict); after the build, what it learnt is merged into the file
// under the file's lock, so that builds sharing it at once all land their entries.
//
// A builder supplies its cache's operations: TensorRT's are ITimingCache's
// (backends/tensorrt/tensorrt_timing_cache.h), the simulator's its own format
// (backends/simulated/timing_cache.h).
//
// Threading: used on the build's thread; the file's lock orders processes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/monitor.h"
#include "core/result.h"

namespace trtwatch {

// `--timing-cache auto`: the user's own cache for the builder and GPU, in their state
// folder (docs/tensorrt.md, "Timing cache").
inline constexpr char kAutoTimingCache[] = "auto";

struct TimingCacheFlags {
  std::string file;              // empty: no cache file
  bool strict = false;           // refuse an unreadable or mismatched cache
  bool ignore_mismatch = false;  // use a mismatched cache without the warning
  // --timing-cache auto: the cache is this folder's file for the builder and GPU
  // (WithCacheFile names it), the folder made when the cache is first attached. Such
  // a cache counts the builds it served and those that merged into it
  // (backends/timing_cache_use.h).
  std::string auto_folder{};
  // The file is never grown past this many bytes (0: no bound): a merge that would
  // pass it keeps the file as it was, with a warning (--timing-cache-max-size).
  uint64_t max_bytes = 0;
  // Set by WithCacheFile for a folder's cache: whose cache it is.
  std::string builder{};
  std::string gpu{};
};

// A GPU as its timing cache knows it: "NVIDIA H100 80GB HBM3 sm 9.0" (a cache holds
// one GPU model's timings).
std::string TimingCacheGpu(std::string_view name, int cc_major, int cc_minor);

// The file name of a builder's cache on a GPU: "tensorrt-10.16.0_nvidia-h100-sm-9.0.cache"
// (lower-case letters, digits and dots; anything else one dash).
std::string AutoTimingCacheName(std::string_view builder, std::string_view gpu);
// The flags with their file named: as given, or the auto folder's file for `builder`
// ("TensorRT 10.16.0") on `gpu` ("NVIDIA H100 sm 9.0").
TimingCacheFlags WithCacheFile(TimingCacheFlags flags, std::string_view builder, std::string_view gpu);

// The lock file that orders the writers of the cache file `cache_file` (and its
// readers that must see one version: the service's downloads).
inline std::string TimingCacheLockFile(const std::string& cache_file) { return cache_file + ".lock"; }

// One build's cache, as a builder holds it.
class TimingCacheOps {
 public:
  virtual ~TimingCacheOps() = default;
  // Makes the build's cache from a file's bytes (empty: a new cache); false when the
  // builder cannot read them.
  virtual bool Load(std::string_view bytes) = 0;
  // Gives the loaded cache to the build; false where it was made on another GPU or
  // version and `ignore_mismatch` is not set.
  virtual bool Attach(bool ignore_mismatch) = 0;
  // The build's cache (what it was given and what it learnt) merged into `current`,
  // another cache's bytes, serialized; nullopt where `current` is not a cache of this
  // GPU and version (or not one at all).
  virtual std::optional<std::string> MergedInto(std::string_view current) = 0;
  // The build's cache alone, serialized; nullopt where it cannot be.
  virtual std::optional<std::string> Serialize() = 0;
  // Who reads the cache, for messages: "TensorRT 10.16.0", "the simulator".
  virtual std::string Reader() const = 0;
};

// Loads `flags.file` into `ops` and attaches it: ok, or why the build must not start.
[[nodiscard]] Status AttachTimingCacheFile(const TimingCacheFlags& flags, TimingCacheOps& ops, Monitor& monitor);

// A cache file's bytes, named for messages.
struct NamedCache {
  std::string name;
  std::string bytes;
};
// The caches (at least one, all of one builder and GPU) merged into one with `ops`
// (`trtwatch timing-cache merge`); an error names the cache that cannot be read or
// belongs to another GPU or version.
[[nodiscard]] Result<std::string> MergeTimingCaches(const std::vector<NamedCache>& caches, TimingCacheOps& ops);

// Merges the build's cache into `flags.file`, under the file's lock; a cache of
// another GPU or version there is replaced, and a merge past `flags.max_bytes` is not
// kept. Problems are warnings: the build stands.
void SaveTimingCacheFile(const TimingCacheFlags& flags, TimingCacheOps& ops, Monitor& monitor);

}  // namespace trtwatch
