// EngineCache: the engine cache of `trtwatch build --engine-cache` (docs/cache.md)
// around your own build code: compute a build key, look an engine up by it, store a
// serialized plan under it, or let GetOrBuild do both so that identical builds (in
// this process or any other sharing the folder) build once.
//
//   trtwatch::CacheKeyResult key = trtwatch::ComputeCacheKey({
//       .models = {"model.onnx"}, .options = {"fp16", "workspace=4G"},
//       .tensorrt_version = trtwatch::tensorrt::RuntimeVersion()});   // <trtwatch/tensorrt.h>
//   trtwatch::EngineCacheOpened opened = trtwatch::EngineCache::Open();  // TRTWATCH_ENGINE_CACHE
//   trtwatch::CachedEngine engine = opened.cache->GetOrBuild(*key.key, [&] {
//     std::unique_ptr<nvinfer1::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
//     return trtwatch::PlanBytes(plan ? plan->data() : nullptr, plan ? plan->size() : 0);
//   });
//   runtime->deserializeCudaEngine(engine.plan.data(), engine.plan.size());
//
// Nothing here throws for a miss or a cache that cannot be used: results say hit,
// miss or error (with the problem and its fix), as BuildResult says how a build ended.
// An exception from your own build function passes through GetOrBuild (the key's lock
// is released first), except in the Watch overload, where it fails the watched build
// as Watch::Run does.
//
// Threading: an EngineCache may be used from several threads at once, and the folder
// by any number of processes: what they share lives in the folder, under its locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <trtwatch/result.h>
#include <trtwatch/watch.h>

namespace trtwatch {

// What an engine depends on: named parts, and the SHA-256 of their canonical document
// (docs/cache.md, "The build key"). Two builds with one key make interchangeable
// engines. Make keys with ComputeCacheKey or CacheKeyFromText.
struct CacheKey {
  std::string digest;  // 64 lowercase hex digits
  std::vector<std::pair<std::string, std::string>> parts;  // sorted by name
};

struct CacheKeyResult {
  std::optional<CacheKey> key;
  std::string error;  // no key: the problem (a model that cannot be read) and its fix

  bool ok() const { return key.has_value(); }
};

// What a build of your own depends on. Everything that changes the engine must be in
// it; what does not (paths, log levels, the timing cache) should stay out.
struct CacheKeySource {
  // Files, by their bytes (model.sha256, or model[i].sha256 for several). For a file
  // named *.onnx the external-data files it names count too, as for `trtwatch build`.
  std::vector<std::string> models;
  // Your builder settings as text ("fp16", "workspace=4G", "profile=x:1x3/8x3/16x3"),
  // in the order given: sort them first where their order does not matter.
  std::vector<std::string> options;
  // TensorRT as loaded: trtwatch::tensorrt::RuntimeVersion() (C++), tensorrt.__version__
  // (Python). Required: an engine only loads into the TensorRT that built it.
  std::string tensorrt_version;
  // The GPU the engine is for. Empty: CUDA's device `device` (CUDA's numbering, after
  // CUDA_VISIBLE_DEVICES), as the builder sees it. Give both for another GPU, or e.g.
  // "any" and "ampere+" for a hardware-compatible engine.
  std::string gpu_name;
  std::string gpu_compute_capability;
  int device = 0;
  // Further named values the engine depends on (a calibration table's digest, a plugin
  // version): the part "extra.NAME".
  std::vector<std::pair<std::string, std::string>> extra;
};

// The key of `source`, or why it cannot be computed (an unreadable model, no TensorRT
// version, no GPU found).
CacheKeyResult ComputeCacheKey(const CacheKeySource& source);
// A key from text you derive yourself: the same text, the same key.
CacheKey CacheKeyFromText(std::string_view text);

// A plan's bytes (IHostMemory's data() and size()) as CachedEngine::plan holds them.
std::vector<char> PlanBytes(const void* data, size_t size);

enum class CacheStatus : uint8_t { kHit, kMiss, kError };
// "hit", "miss", "error".
std::string_view CacheStatusName(CacheStatus status);

// What a lookup, or GetOrBuild, found.
struct CachedEngine {
  CacheStatus status = CacheStatus::kMiss;
  std::string error;    // kError: the problem and its fix
  std::string warning;  // a damaged entry that was quarantined; a built plan that could not be kept
  std::string key;      // the key's digest
  // kHit: the engine in the cache (read-only, its bytes checked). Read it, never write it.
  std::string path;
  // The plan's bytes: Get's and GetOrBuild's hit, GetOrBuild's fresh build.
  std::vector<char> plan;
  uint64_t size = 0;         // the plan's bytes
  double age_seconds = 0;    // kHit: how long ago it was stored
  double build_seconds = 0;  // how long its build took (GetOrBuild's miss: this build)
  bool stored = false;       // GetOrBuild's miss: the plan is in the cache now
  std::optional<BuildResult> result;  // GetOrBuild under a Watch: how the watched build ended

  bool hit() const { return status == CacheStatus::kHit; }
};

struct CacheStoreResult {
  bool stored = false;
  std::string error;  // not stored: why (an unwritable folder, a plan over the size limit)
  std::vector<std::string> pruned;  // least recently used keys removed to stay within the limits
};

// Counters over every process that used the folder.
struct EngineCacheStats {
  uint64_t entries = 0;
  uint64_t bytes = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  double seconds_saved = 0;  // the build time of every engine reused
};

struct EngineCacheOptions {
  std::string folder;  // "": TRTWATCH_ENGINE_CACHE
  // Least recently used entries go once a bound is passed (default 100 GiB, 1000 entries).
  std::optional<uint64_t> max_bytes;
  std::optional<uint64_t> max_entries;
};

class EngineCache;
struct EngineCacheOpened {
  std::unique_ptr<EngineCache> cache;
  std::string error;  // no cache: the problem and its fix
};

class EngineCache {
 public:
  // The cache in `options.folder` (created when absent).
  static EngineCacheOpened Open(EngineCacheOptions options = {});
  ~EngineCache();
  EngineCache(const EngineCache&) = delete;
  EngineCache& operator=(const EngineCache&) = delete;

  // The entry of `key`: its path and facts, no bytes. A hit counts as one and keeps
  // the entry from being pruned soon. Every byte is checked against the digest recorded
  // when it was stored: a damaged entry is quarantined (docs/cache.md), a miss with a
  // warning naming where it went.
  CachedEngine Find(const CacheKey& key);
  // Find, and the plan's bytes (read once: checked as they are read).
  CachedEngine Get(const CacheKey& key);

  // Stores a plan under `key`, atomically: other readers see the whole entry or none.
  // `build_seconds` is how long its build took (what a later hit saves); `model` names
  // the entry in `trtwatch cache ls`. Waits while a GetOrBuild of the key runs.
  CacheStoreResult Put(const CacheKey& key, const void* plan, size_t size, double build_seconds,
                       const std::string& model = "");
  // The same for an engine already in a file (copied, or reflinked where the file system
  // can; never linked or moved).
  CacheStoreResult PutFile(const CacheKey& key, const std::string& engine_path, double build_seconds,
                           const std::string& model = "");

  // The plan's bytes; empty when the build failed (nothing is stored then).
  using PlanBuilder = std::function<std::vector<char>()>;
  // The stored plan of `key` (kHit); else `build` runs and its plan is stored (kMiss,
  // `stored`). A build that returns no plan is kError, and nothing is stored. The key's
  // lock is held throughout: an identical GetOrBuild anywhere waits, then hits.
  CachedEngine GetOrBuild(const CacheKey& key, const PlanBuilder& build, const std::string& model = "");
  // The same under `watch`, which must not have started (std::logic_error, as from
  // Watch::Start): its build_start, build_finish and result carry the key and "hit" or
  // "miss" as `trtwatch build`'s do, the build joins the build history by its key (and
  // so shows an ETA), and a hit finishes the watch succeeded without calling `build`.
  // CachedEngine::result is the watch's result; a build that did not succeed is kError
  // with it, a cache that could not be used kError without it (the watch never started).
  // The entry is named by WatchOptions::model.
  CachedEngine GetOrBuild(const CacheKey& key, Watch& watch, const PlanBuilder& build);

  EngineCacheStats Stats() const;
  // DIR/v1: where the entries are.
  const std::string& folder() const;

 private:
  struct State;
  explicit EngineCache(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace trtwatch
