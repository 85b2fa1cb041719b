// The folder of the user's automatic timing caches (`--timing-cache auto`,
// docs/tensorrt.md, "Timing cache"): STATE_FOLDER/timing-caches (platform/state_folder.h),
// one file per builder and GPU, named by AutoTimingCacheName. `trtwatch timing-cache`
// lists and removes them.
//
// Threading: functions of their arguments and the file system; the caches' own lock
// files order builds that write them (backends/timing_cache_file.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "runner/output_mode.h"

namespace trtwatch {

// STATE_FOLDER/timing-caches; an error names the variable to set.
[[nodiscard]] Result<std::string> AutoTimingCacheFolder(const EnvLookup& env);

// Whether `name` may be a folder's cache: AutoTimingCacheName's alphabet (lower-case
// letters, digits, ".", "-", "_"), ending ".cache", no leading dot or dash, at most
// 255 characters. The service checks names from requests and workers with it.
bool IsTimingCacheName(std::string_view name);

struct TimingCacheFile {
  std::string name;  // "tensorrt-10.16.0_nvidia-h100-sm-9.0.cache"
  uint64_t size = 0;
  double modified_unix = 0;
  std::optional<int64_t> entries{};  // a simulated cache's; TensorRT's format does not say
  std::string gpu{};      // its GPU: as its builds named it (its use), or as a simulated cache records it
  std::string builder{};  // as its builds named it; empty where none said
  int64_t served = 0;       // builds given it (backends/timing_cache_use.h)
  int64_t contributed = 0;  // builds merged into it
};

// The caches in `folder`, by name (none where the folder does not exist).
std::vector<TimingCacheFile> ListTimingCaches(const std::string& folder);
// Removes the cache `name` of `folder`; an error says why (no such cache, a name that
// is not one of the folder's files).
[[nodiscard]] Status RemoveTimingCache(const std::string& folder, const std::string& name);

}  // namespace trtwatch
