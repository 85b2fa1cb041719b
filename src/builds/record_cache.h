// RecordCache: the engine cache's part in a build as its record keeps it (docs/api.md,
// the record's `cache`): hit or miss, the build key, and for a hit how long ago the
// reused engine was built and how long that build took (docs/cache.md).
//
// The manager takes it from the worker's build_start and build_finish: a worker's bytes
// are never trusted, so every value is checked here before a record keeps it, and so
// is a stored document's when it is read back.
//
// Threading: value types and pure functions.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <trtwatch/result.h>

namespace trtwatch::builds {

inline constexpr size_t kBuildKeyDigits = 64;  // a SHA-256 in hex
// The longest age or build time a record believes (a century): beyond it a clock or a
// worker is wrong.
inline constexpr double kMaxCacheSeconds = 100.0 * 365 * 86400;

struct RecordCache {
  std::string state;  // "hit" | "miss"
  std::string key;    // the build key: kBuildKeyDigits lowercase hex digits
  std::optional<double> age_seconds;    // a hit: how long ago the reused engine was built
  std::optional<double> built_seconds;  // a hit: how long that build took

  bool operator==(const RecordCache&) const = default;
};

// What a worker's (or a stored document's) cache fields come to: `cache` is what the
// record keeps, absent where the build used no cache; `error` names the value refused
// (then `cache` is absent).
struct RecordCacheReading {
  std::optional<RecordCache> cache;
  std::string error;

  bool ok() const { return error.empty(); }
};

// The cache fields of a worker's build_start or build_finish. No state: no cache (a
// simulated build, "cache": false, a key that could not be computed).
RecordCacheReading RecordCacheFromWorker(const CacheUse& use);

// The record's `cache`: {"state", "key", "age_seconds", "built_seconds"} (the last two
// null on a miss), or null.
nlohmann::json RecordCacheJson(const std::optional<RecordCache>& cache);
// A stored `cache` read back, checked as a worker's is; null or absent: none.
RecordCacheReading RecordCacheFromJson(const nlohmann::json& j);

}  // namespace trtwatch::builds
