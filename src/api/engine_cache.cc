// The public EngineCache (include/trtwatch/engine_cache.h): the engine cache of
// `trtwatch build` (cache/engine_cache.h) for plans built in the caller's own code.
// Every lookup and store holds the key's lock, as the CLI's build does.
#include <trtwatch/engine_cache.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "api/cache_key.h"
#include "core/clock.h"
#include "cache/engine_cache.h"
#include "core/build_session.h"
#include "runner/output_mode.h"

namespace trtwatch {

namespace {

CachedEngine Failed(const std::string& key, std::string error) {
  CachedEngine failed;
  failed.status = CacheStatus::kError;
  failed.key = key;
  failed.error = std::move(error);
  return failed;
}

void DescribeHit(const cache::CacheEntry& entry, const std::string& path, CachedEngine* found) {
  found->status = CacheStatus::kHit;
  found->path = path;
  found->size = entry.size;
  found->age_seconds = std::max(0.0, Clock::SystemUnixSeconds() - entry.built_unix);
  found->build_seconds = entry.build_seconds;
}

}  // namespace

std::string_view CacheStatusName(CacheStatus status) {
  switch (status) {
    case CacheStatus::kHit:
      return "hit";
    case CacheStatus::kMiss:
      return "miss";
    case CacheStatus::kError:
      return "error";
  }
  return "error";
}

struct EngineCache::State {
  std::unique_ptr<cache::EngineCache> cache;

  // The key checked and its lock held, or why not (in `*error`).
  std::unique_ptr<FileLock> Lock(const CacheKey& key, std::optional<keys::BuildKey>* checked, std::string* error) {
    api::CheckedKey check = api::CheckKey(key);
    if (!check.key) {
      *error = check.error;
      return nullptr;
    }
    std::string why;
    std::unique_ptr<FileLock> lock = cache->LockKey(check.key->digest, nullptr, &why);
    if (!lock) {
      *error = "cannot take the engine cache's lock of key " + key.digest.substr(0, 12) + ": " + why;
      return nullptr;
    }
    *checked = std::move(check.key);
    return lock;
  }

  // The entry of `key` (hold its lock), with its bytes when `read_plan`; every byte is
  // checked against the entry's digest, and a damaged entry (quarantined) is a miss
  // with a warning.
  CachedEngine Look(const keys::BuildKey& key, bool read_plan) {
    CachedEngine found;
    found.key = key.digest;
    const cache::Lookup lookup = cache->Find(key);
    found.warning = lookup.warning;
    if (lookup.outcome != cache::Lookup::Outcome::kHit) return found;
    if (read_plan) {
      cache::ReadOutcome read = cache->Read(*lookup.entry);  // counts the hit
      if (!read.bytes) {
        found.warning = read.warning;
        return found;
      }
      found.plan = std::move(*read.bytes);
    } else {
      found.warning = cache->Verify(*lookup.entry);
      if (!found.warning.empty()) return found;
      cache->CountHit(*lookup.entry);
    }
    DescribeHit(*lookup.entry, cache->EnginePath(*lookup.entry), &found);
    return found;
  }

  // Keeps a plan just built; says so in `built`.
  void Keep(const keys::BuildKey& key, const std::string& model, double seconds, CachedEngine* built) {
    const cache::StoreOutcome stored =
        cache->StoreBytes(key, model, std::string_view(built->plan.data(), built->plan.size()), seconds);
    built->stored = stored.stored;
    if (!stored.stored) built->warning = "the plan was built but not kept in the engine cache: " + stored.error;
  }
};

EngineCache::EngineCache(std::unique_ptr<State> state) : state_(std::move(state)) {}
EngineCache::~EngineCache() = default;

EngineCacheOpened EngineCache::Open(EngineCacheOptions options) {
  EngineCacheOpened opened;
  if (options.folder.empty()) options.folder = ProcessEnvironment()(cache::kEngineCacheVariable).value_or("");
  if (options.folder.empty()) {
    opened.error = "the engine cache needs a folder: EngineCacheOptions::folder (Python: EngineCache(dir)) or " +
                   std::string(cache::kEngineCacheVariable);
    return opened;
  }
  if (options.max_bytes == uint64_t{0} || options.max_entries == uint64_t{0}) {
    opened.error = "the engine cache's max_bytes and max_entries must be greater than zero (or left unset)";
    return opened;
  }
  cache::CacheLimits limits;
  limits.max_bytes = options.max_bytes.value_or(limits.max_bytes);
  limits.max_entries = options.max_entries.value_or(limits.max_entries);
  cache::OpenOutcome internal = cache::EngineCache::Open(options.folder, limits);
  if (!internal.cache) {
    opened.error = internal.error;
    return opened;
  }
  auto state = std::make_unique<State>();
  state->cache = std::move(internal.cache);
  opened.cache.reset(new EngineCache(std::move(state)));
  return opened;
}

CachedEngine EngineCache::Find(const CacheKey& key) {
  std::optional<keys::BuildKey> checked;
  std::string error;
  const std::unique_ptr<FileLock> lock = state_->Lock(key, &checked, &error);
  if (!lock) return Failed(key.digest, error);
  return state_->Look(*checked, /*read_plan=*/false);
}

CachedEngine EngineCache::Get(const CacheKey& key) {
  std::optional<keys::BuildKey> checked;
  std::string error;
  const std::unique_ptr<FileLock> lock = state_->Lock(key, &checked, &error);
  if (!lock) return Failed(key.digest, error);
  return state_->Look(*checked, /*read_plan=*/true);
}

CacheStoreResult EngineCache::Put(const CacheKey& key, const void* plan, size_t size, double build_seconds,
                                  const std::string& model) {
  if (plan == nullptr || size == 0) return CacheStoreResult{false, "an empty plan: nothing to store", {}};
  std::optional<keys::BuildKey> checked;
  std::string error;
  const std::unique_ptr<FileLock> lock = state_->Lock(key, &checked, &error);
  if (!lock) return CacheStoreResult{false, error, {}};
  cache::StoreOutcome stored = state_->cache->StoreBytes(
      *checked, model, std::string_view(static_cast<const char*>(plan), size), std::max(0.0, build_seconds));
  return CacheStoreResult{stored.stored, std::move(stored.error), std::move(stored.pruned)};
}

CacheStoreResult EngineCache::PutFile(const CacheKey& key, const std::string& engine_path, double build_seconds,
                                      const std::string& model) {
  std::optional<keys::BuildKey> checked;
  std::string error;
  const std::unique_ptr<FileLock> lock = state_->Lock(key, &checked, &error);
  if (!lock) return CacheStoreResult{false, error, {}};
  cache::StoreOutcome stored = state_->cache->Store(*checked, model, engine_path, std::max(0.0, build_seconds));
  return CacheStoreResult{stored.stored, std::move(stored.error), std::move(stored.pruned)};
}

CachedEngine EngineCache::GetOrBuild(const CacheKey& key, const PlanBuilder& build, const std::string& model) {
  std::optional<keys::BuildKey> checked;
  std::string error;
  const std::unique_ptr<FileLock> lock = state_->Lock(key, &checked, &error);
  if (!lock) return Failed(key.digest, error);
  CachedEngine found = state_->Look(*checked, /*read_plan=*/true);
  if (found.hit()) return found;
  const auto start = std::chrono::steady_clock::now();
  found.plan = build();  // an exception passes through; the lock goes with it
  found.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  found.size = found.plan.size();
  if (found.plan.empty()) {
    state_->cache->CountMiss();
    found.status = CacheStatus::kError;
    found.error = "the build function returned no plan (the build failed): nothing was stored";
    return found;
  }
  state_->Keep(*checked, model, found.build_seconds, &found);
  return found;
}

CachedEngine EngineCache::GetOrBuild(const CacheKey& key, Watch& watch, const PlanBuilder& build) {
  std::optional<keys::BuildKey> checked;
  std::string error;
  const std::unique_ptr<FileLock> lock = state_->Lock(key, &checked, &error);
  if (!lock) return Failed(key.digest, error);
  CachedEngine found = state_->Look(*checked, /*read_plan=*/true);
  if (found.hit()) {
    watch.DescribeCache(key.parts, CacheUse{key.digest, "hit", found.age_seconds, found.build_seconds});
    watch.Start();
    found.result = watch.Finish(true);  // the cache's plan: no builder
    return found;
  }
  watch.DescribeCache(key.parts, CacheUse{key.digest, "miss", std::nullopt, std::nullopt});
  watch.Start();
  if (!found.warning.empty()) watch.Log(Severity::kWarning, found.warning);
  const BuildOutcome outcome = CallBuild([&] {
    found.plan = build();
    return BuildOutcome{!found.plan.empty(), {}};
  });
  found.result = watch.Finish(outcome.engine_built, outcome.error);
  found.build_seconds = found.result->elapsed;
  found.size = found.plan.size();
  if (!found.result->succeeded() || found.plan.empty()) {
    state_->cache->CountMiss();
    found.status = CacheStatus::kError;
    found.error = "the build ended " + std::string(BuildStatusName(found.result->status)) +
                  (found.result->error.empty() ? "" : ": " + found.result->error) + "; nothing was stored";
    return found;
  }
  state_->Keep(*checked, watch.model(), found.build_seconds, &found);
  return found;
}

EngineCacheStats EngineCache::Stats() const {
  const cache::CacheStats stats = state_->cache->Stats();
  return EngineCacheStats{stats.entries, stats.bytes, stats.hits, stats.misses, stats.seconds_saved};
}

const std::string& EngineCache::folder() const { return state_->cache->folder(); }

}  // namespace trtwatch
