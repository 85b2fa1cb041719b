#include "backends/simulated/timing_cache.h"

#include <nlohmann/json.hpp>

#include "protocol/utf8.h"

namespace trtwatch::sim {

namespace {

using nlohmann::json;

constexpr char kFormat[] = "trtwatch-simulated-timing-cache";
constexpr int kVersion = 1;
// Bounds on what a file may hold: far above any profile's (its steps are bounded too).
constexpr size_t kMaxBytes = size_t{64} << 20;
constexpr size_t kMaxEntries = 1000000;
constexpr size_t kMaxName = 1024;
constexpr int64_t kMaxTactic = 100000;
constexpr int64_t kMaxMicroseconds = int64_t{1} << 40;  // ~12 days

Status Bad(const std::string& what) {
  return Status::Error("not a simulated timing cache: " + what +
                       " (docs/simulator.md, \"Timing caches\"; delete the file to start a new one)");
}

bool IsName(const json& value) {
  if (!value.is_string()) return false;
  const std::string& text = value.get_ref<const std::string&>();
  return !text.empty() && text.size() <= kMaxName && IsValidUtf8(text);
}

bool IsInteger(const json& value, int64_t high) {
  return value.is_number_integer() && value.get<int64_t>() >= 0 && value.get<int64_t>() <= high;
}

// Entries are moved out of `doc`: a cache may hold a million.
Result<TimingCacheData> FromJson(json& doc) {
  if (!doc.is_object()) return Bad("not a JSON object");
  const auto format = doc.find("format");
  if (format == doc.end() || *format != kFormat) return Bad("no \"format\": \"" + std::string(kFormat) + "\"");
  const auto version = doc.find("version");
  if (version == doc.end() || *version != kVersion) return Bad("\"version\" must be " + std::to_string(kVersion));
  const auto builder = doc.find("builder");
  const auto gpu = doc.find("gpu");
  const auto entries = doc.find("entries");
  if (builder == doc.end() || !IsName(*builder) || gpu == doc.end() || !IsName(*gpu)) {
    return Bad("\"builder\" and \"gpu\" must be names");
  }
  if (entries == doc.end() || !entries->is_array() || entries->size() > kMaxEntries) {
    return Bad("\"entries\" must be an array of at most " + std::to_string(kMaxEntries));
  }
  TimingCacheData cache{{builder->get<std::string>(), gpu->get<std::string>()}, {}};
  for (json& entry : *entries) {
    if (!entry.is_array() || entry.size() != 3 || !IsName(entry[0]) || !IsInteger(entry[1], kMaxTactic) ||
        !IsInteger(entry[2], kMaxMicroseconds)) {
      return Bad("entry " + std::to_string(cache.entries.size()) + " is not [node, tactic, microseconds]");
    }
    // Written in key order (SerializeTimingCache): each entry goes at the end, without a search.
    cache.entries.emplace_hint(cache.entries.end(),
                               TacticKey{std::move(entry[0].get_ref<std::string&>()), entry[1].get<int32_t>()},
                               entry[2].get<int64_t>());
  }
  return cache;
}

}  // namespace

Result<TimingCacheData> ParseTimingCache(std::string_view text) {
  if (text.size() > kMaxBytes) return Bad("over " + std::to_string(kMaxBytes >> 20) + " MiB");
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Bad("not JSON");
  return FromJson(doc);
}

std::string SerializeTimingCache(const TimingCacheData& cache) {
  json entries = json::array();
  for (const auto& [key, us] : cache.entries) entries.push_back(json::array({key.first, key.second, us}));
  const json doc = {{"format", kFormat},
                    {"version", kVersion},
                    {"builder", cache.maker.builder},
                    {"gpu", cache.maker.gpu},
                    {"entries", std::move(entries)}};
  return doc.dump() + "\n";
}

size_t MergeTimingCache(TimingCacheData& into, const TimingCacheData& from) {
  size_t added = 0;
  for (const auto& [key, us] : from.entries) added += into.entries.emplace(key, us).second ? 1 : 0;
  return added;
}

SimTimingCache::SimTimingCache(CacheMaker maker) : maker_(std::move(maker)) {}

bool SimTimingCache::Load(std::string_view bytes) {
  Result<TimingCacheData> loaded = bytes.empty() ? Result<TimingCacheData>(TimingCacheData{maker_, {}})
                                                 : ParseTimingCache(bytes);
  if (!loaded.ok()) return false;
  MutexLock lock(&mu_);
  data_ = std::move(loaded).value();
  return true;
}

bool SimTimingCache::Attach(bool ignore_mismatch) {
  MutexLock lock(&mu_);
  if (data_.maker != maker_ && !ignore_mismatch) return false;
  data_.maker = maker_;  // used anyway: what it holds now counts as this GPU's
  attached_ = true;
  return true;
}

std::optional<std::string> SimTimingCache::MergedInto(std::string_view current) {
  Result<TimingCacheData> merged = ParseTimingCache(current);
  if (!merged.ok() || merged->maker != maker_) return std::nullopt;
  MutexLock lock(&mu_);
  MergeTimingCache(merged.value(), data_);
  return SerializeTimingCache(*merged);
}

std::optional<std::string> SimTimingCache::Serialize() {
  MutexLock lock(&mu_);
  return SerializeTimingCache(data_);
}

bool SimTimingCache::Has(const TacticKey& key) {
  MutexLock lock(&mu_);
  if (!attached_ || !data_.entries.contains(key)) return false;
  ++hits_;
  return true;
}

void SimTimingCache::Learn(TacticKey key, int64_t us) {
  MutexLock lock(&mu_);
  if (attached_ && data_.entries.emplace(std::move(key), us).second) ++learnt_;
}

int64_t SimTimingCache::hits() {
  MutexLock lock(&mu_);
  return hits_;
}

int64_t SimTimingCache::learnt() {
  MutexLock lock(&mu_);
  return learnt_;
}

}  // namespace trtwatch::sim
