#include "builds/after_build.h"

#include <cstdio>
#include <filesystem>
#include <utility>

#include "builds/build_history.h"
#include "builds/build_record.h"
#include "builds/build_request.h"
#include "builds/worker_stream.h"
#include "cache/engine_cache.h"
#include "history/history_file.h"
#include "platform/file_access.h"

namespace trtwatch::builds {

namespace {

// The timing-cache file a request names, or empty.
std::string TimingCacheOf(const BuildRequest& request) {
  for (const auto& [flag, value] : request.options) {
    if (flag == "timing-cache" || flag == "timingCacheFile") return value;
  }
  return {};
}

// Why a finished build has no file of `kind` where its record names none.
std::string NoFileReason(const BuildRecord& r, ArtifactKind kind) {
  if (r.backend == "simulated") return "it was a simulated build, which makes no files";
  if (r.state != BuildState::kSucceeded) return "it ended " + std::string(BuildStateName(r.state));
  return kind == ArtifactKind::kEngine ? "it stored none" : "its request named no \"timing-cache\" option";
}

}  // namespace

AfterBuild::AfterBuild(RecordStore& store, std::string data_dir) : store_(store), data_dir_(std::move(data_dir)) {
  std::string ignored;
  MakePrivateFolder(engine_dir(), &ignored);
  MakePrivateFolder(data_dir_ + "/caches", &ignored);  // relative timing-cache paths land here
}

void AfterBuild::DropPartialEngine(const std::string& id) const { std::remove(PartialEngine(id).c_str()); }

std::string AfterBuild::SeedHistory(const BuildRecord& record, const BuildRequest& request) {
  const std::string folder = HistoryWorkFolder(data_dir_, record.id);
  const SeedResult seeded = SeedHistoryFolder(store_, folder, record.backend,
                                              HistoryModelOf(request.simulate, request.resolved_model),
                                              history::UnixNow());
  if (seeded.outcome == SeedResult::Outcome::kSeeded) return folder;
  std::fprintf(stderr, "trtwatch serve: warning: build %s runs without history: %s\n", record.id.c_str(),
               seeded.warning.c_str());
  RemoveHistoryFolder(folder);
  return "";
}

void AfterBuild::KeepHistory(BuildRecord& record, bool saw_finish, int64_t lease_generation) {
  const std::string folder = HistoryWorkFolder(data_dir_, record.id);
  if (InspectPath(folder).kind != PathKind::kFolder) return;  // the build ran without history
  HarvestResult harvest = HarvestHistoryFolder(folder, record.id);
  if (harvest.entry && !record.history_key.empty() && harvest.entry->key != record.history_key) {
    harvest = {HarvestResult::Outcome::kNone, std::nullopt, "its entry names another build key than its stream"};
  }
  if (harvest.entry) {
    if (record.history_key.empty() && IsKeyDigest(harvest.entry->key)) record.history_key = harvest.entry->key;
    // The history says how the build ended as its record does: a scheduler's verdict
    // (Slurm's time limit reaches the worker as a SIGTERM, which it calls a cancel).
    if (harvest.entry->status != StatusFromState(record.state)) {
      harvest.entry->status = StatusFromState(record.state);
      harvest.entry->error = record.error;
    }
    const HistoryStoreResult stored = StoreHistoryEntry(store_, std::move(*harvest.entry), history::UnixNow(), lease_generation);
    if (!stored.warning.empty()) {
      std::fprintf(stderr, "trtwatch serve: warning: build %s: history: %s\n", record.id.c_str(),
                   stored.warning.c_str());
    }
  } else if (saw_finish && !record.history_key.empty()) {
    // A worker that ended with a key appends its entry; one killed, or a build without
    // a key, leaves none: no news.
    std::fprintf(stderr, "trtwatch serve: warning: build %s is not in the history: %s\n", record.id.c_str(),
                 harvest.warning.c_str());
  }
  DropHistory(record.id);
}

void AfterBuild::DropHistory(const std::string& id) {
  const std::string folder = HistoryWorkFolder(data_dir_, id);
  if (InspectPath(folder).kind == PathKind::kMissing) return;
  if (const std::string why = RemoveHistoryFolder(folder); !why.empty()) {
    std::fprintf(stderr, "trtwatch serve: warning: build %s: %s\n", id.c_str(), why.c_str());
  }
}

namespace {

// The digest of build `r`'s engine from its engine-cache entry, when it has one whose
// size is the placed file's; nothing otherwise.
std::optional<StoredFile> EngineDigestFromCache(const BuildRecord& r, const std::string& engine_cache_dir,
                                                const std::string& placed) {
  if (engine_cache_dir.empty() || !r.cache || !IsKeyDigest(r.cache->key)) return std::nullopt;
  const cache::OpenOutcome opened = cache::EngineCache::Open(engine_cache_dir);
  if (!opened.cache) return std::nullopt;
  const std::optional<cache::CacheEntry> entry = opened.cache->Recorded(r.cache->key);
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(placed, ec);
  if (!entry || ec || entry->size != size || entry->sha256.size() != 64) return std::nullopt;
  return StoredFile{std::filesystem::path(placed).filename().string(), entry->size, entry->sha256};
}

}  // namespace

void AfterBuild::StoreEngine(BuildRecord& r, const std::string& engine_cache_dir) {
  const std::string part = PartialEngine(r.id);
  const std::string final_path = engine_dir() + "/" + r.id + ".engine";
  if (std::rename(part.c_str(), final_path.c_str()) != 0) {
    r.state = BuildState::kFailed;
    r.error = "the worker reported success but left no engine at " + part;
    return;
  }
  r.engine = final_path;
  // Its sidecar keeps the digest for every download's ETag and Repr-Digest.
  StoredFile file;
  std::string error;
  if (std::optional<StoredFile> recorded = EngineDigestFromCache(r, engine_cache_dir, final_path)) {
    file = *recorded;
    if (!WriteDigestSidecar(final_path, file, &error)) {
      std::fprintf(stderr, "trtwatch serve: warning: build %s: %s\n", r.id.c_str(), error.c_str());
    }
  } else if (!FileDigest(final_path, &file, &error)) {
    return;
  }
  r.engine_bytes = file.size;
  r.engine_sha256 = file.sha256;
}

void AfterBuild::StoreTimingCache(BuildRecord& record, const BuildRequest& request) {
  const std::string source = TimingCacheOf(request);
  if (source.empty() || InspectPath(source).kind != PathKind::kFile) return;
  const std::string copy = engine_dir() + "/" + record.id + ".timing-cache";
  const std::string part = copy + ".part";
  std::error_code ec;
  std::filesystem::copy_file(source, part, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec || std::rename(part.c_str(), copy.c_str()) != 0) {
    std::remove(part.c_str());
    return;  // the build stands; only its cache is not downloadable
  }
  StoredFile file;
  std::string error;
  if (!FileDigest(copy, &file, &error)) return;
  record.timing_cache = copy;
  record.timing_cache_bytes = file.size;
  record.timing_cache_sha256 = file.sha256;
}

ArtifactResult AfterBuild::Artifact(const BuildRecord& r, ArtifactKind kind) const {
  const std::string what = kind == ArtifactKind::kEngine ? "engine" : "timing cache";
  const std::string& id = r.id;
  if (!IsFinal(r.state)) {
    return {ArtifactOutcome::kNotYet, "", {}, "build " + id + " is still " + std::string(BuildStateName(r.state)) +
                                                 "; its " + what + " can be downloaded once it has succeeded "
                                                 "(follow GET /builds/" + id + "/events)"};
  }
  const std::string path = kind == ArtifactKind::kEngine ? r.engine : r.timing_cache;
  if (path.empty()) return {ArtifactOutcome::kNone, "", {}, "build " + id + " has no " + what + ": " + NoFileReason(r, kind)};
  if (InspectPath(path).kind != PathKind::kFile) {
    return {ArtifactOutcome::kNone, "", {}, "build " + id + "'s " + what + " is no longer stored (removed from " +
                                                engine_dir() + ")"};
  }
  ArtifactResult result;
  result.path = path;
  // The record's digest where it has one for the file as it is (the engine's from the
  // engine cache's entry, see StoreEngine), else the file's sidecar.
  const std::string& recorded = kind == ArtifactKind::kEngine ? r.engine_sha256 : r.timing_cache_sha256;
  const uint64_t recorded_size = kind == ArtifactKind::kEngine ? r.engine_bytes.value_or(0) : r.timing_cache_bytes;
  std::error_code ec;
  if (!recorded.empty() && std::filesystem::file_size(path, ec) == recorded_size && !ec) {
    result.file = {std::filesystem::path(path).filename().string(), recorded_size, recorded};
  } else if (!FileDigest(path, &result.file, &result.error)) {
    return {ArtifactOutcome::kNone, "", {}, result.error};
  }
  result.outcome = ArtifactOutcome::kFound;
  return result;
}

}  // namespace trtwatch::builds
