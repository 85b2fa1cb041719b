#include "builds/record_cache.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace trtwatch::builds {

namespace {

using nlohmann::json;

RecordCacheReading Refused(const std::string& why) { return {std::nullopt, why}; }

bool IsBuildKey(const std::string& key) {
  return key.size() == kBuildKeyDigits && key.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Why `seconds` is no age or build time (negative, not finite, past a century), or empty.
std::string SecondsError(const char* name, const std::optional<double>& seconds) {
  if (!seconds || (std::isfinite(*seconds) && *seconds >= 0 && *seconds <= kMaxCacheSeconds)) return "";
  return std::string(name) + " must be a number of seconds from 0 to a century";
}

// The one check of every source: the state, the key, and a hit's times.
RecordCacheReading Checked(RecordCache cache) {
  if (cache.state != "hit" && cache.state != "miss") return Refused("the cache state must be hit or miss");
  if (!IsBuildKey(cache.key)) return Refused("the build key must be 64 lowercase hex digits");
  if (cache.state == "miss") {  // a miss reused nothing: no age, no earlier build time
    cache.age_seconds.reset();
    cache.built_seconds.reset();
  }
  for (const auto& [name, seconds] : {std::pair{"age_seconds", cache.age_seconds},
                                      std::pair{"built_seconds", cache.built_seconds}}) {
    if (std::string why = SecondsError(name, seconds); !why.empty()) return Refused(why);
  }
  return {std::move(cache), ""};
}

json OptionalSeconds(const std::optional<double>& s) { return s ? json(*s) : json(nullptr); }

// A stored time: a number, or null/absent for none; anything else is refused as a
// negative would be.
std::optional<double> SecondsFromJson(const json& j, const char* key, bool* bad) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_number()) {
    *bad = true;
    return std::nullopt;
  }
  return j[key].get<double>();
}

}  // namespace

RecordCacheReading RecordCacheFromWorker(const CacheUse& use) {
  if (use.state.empty()) return {};  // the build used no cache, whatever key it computed
  return Checked({use.state, use.key, use.age_seconds, use.built_seconds});
}

json RecordCacheJson(const std::optional<RecordCache>& cache) {
  if (!cache) return nullptr;
  return {{"state", cache->state},
          {"key", cache->key},
          {"age_seconds", OptionalSeconds(cache->age_seconds)},
          {"built_seconds", OptionalSeconds(cache->built_seconds)}};
}

RecordCacheReading RecordCacheFromJson(const json& j) {
  if (j.is_null()) return {};
  if (!j.is_object()) return Refused("the cache must be an object or null");
  if (!j.contains("state") || !j["state"].is_string() || !j.contains("key") || !j["key"].is_string()) {
    return Refused("the cache needs a state and a key");
  }
  bool bad = false;
  RecordCache cache{j["state"].get<std::string>(), j["key"].get<std::string>(),
                    SecondsFromJson(j, "age_seconds", &bad), SecondsFromJson(j, "built_seconds", &bad)};
  if (bad) return Refused("the cache's times must be numbers of seconds or null");
  return Checked(std::move(cache));
}

}  // namespace trtwatch::builds
