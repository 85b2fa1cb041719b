// AfterBuild: what the manager does around a build's end, apart from its record and
// log: the history folder a worker is seeded with and whose entry is taken into the
// store's history afterwards (builds/build_history.h), the engine a worker wrote
// (renamed into place and hashed), the copy of the timing cache a request named, and
// the lookup of those files for a download.
//
// Files: DATA_DIR/engines/<id>.engine (.part while the worker writes it),
// DATA_DIR/engines/<id>.timing-cache, and the history work folder of each build.
//
// Threading: the build manager's event-loop thread (it calls the store). Warnings go
// to stderr: a build stands without its history or its cache copy.
#pragma once

#include <string>

#include "builds/artifacts/artifact_store.h"  // StoredFile

namespace trtwatch::builds {

struct BuildRecord;
struct BuildRequest;
class RecordStore;

// A build's downloadable files (GET /builds/{id}/engine, .../timing-cache).
enum class ArtifactKind { kEngine, kTimingCache };
enum class ArtifactOutcome {
  kFound,     // `path`, `file` (size, sha256)
  kNotFound,  // no such build
  kNone,      // the build has none (simulated, failed, none asked for, file gone): `error` says which
  kNotYet,    // the build is still queued or running
};
struct ArtifactResult {
  ArtifactOutcome outcome = ArtifactOutcome::kNone;
  std::string path;
  StoredFile file;
  std::string error;
};

class AfterBuild {
 public:
  // `data_dir` is canonical; its engines/ and caches/ folders are made here (a folder
  // that cannot be made fails the builds that need it, with the reason).
  AfterBuild(RecordStore& store, std::string data_dir);

  // Where finished engines and timing-cache copies are kept (DATA_DIR/engines).
  std::string engine_dir() const { return data_dir_ + "/engines"; }
  // Where build `id`'s worker writes its engine, renamed into place only on success.
  std::string PartialEngine(const std::string& id) const { return engine_dir() + "/" + id + ".engine.part"; }
  void DropPartialEngine(const std::string& id) const;

  // The build's history folder, seeded from the store; empty when it could not be
  // (the build runs without history, with a warning).
  std::string SeedHistory(const BuildRecord& record, const BuildRequest& request);
  // The worker's entry into the store's history (its status as the record ended), then
  // the folder removed; `saw_finish`: the worker reported its end (a missing entry is news);
  // `lease_generation` nonzero: stored only under that lease of the build (fenced).
  void KeepHistory(BuildRecord& record, bool saw_finish, int64_t lease_generation = 0);
  // The folder removed without taking anything from it.
  void DropHistory(const std::string& id);

  // A succeeded build's engine moved into place, its digest and size recorded; the
  // record fails when the worker left none. The digest is the engine cache's entry's
  // (in `engine_cache_dir`, empty: none) where the build went through the cache: a hit
  // placed the entry's bytes checked against it, a miss stored them hashed on the way
  // in. It is never a hash of the placed file, except for a build with no entry (no
  // cache, or one that kept nothing), whose placed file is hashed once.
  void StoreEngine(BuildRecord& record, const std::string& engine_cache_dir);
  // A copy of the timing cache the request named (later builds may update the original).
  void StoreTimingCache(BuildRecord& record, const BuildRequest& request);

  // The file of kind `kind` of a build whose record is `record` (kFound with its digest,
  // or why there is none).
  ArtifactResult Artifact(const BuildRecord& record, ArtifactKind kind) const;

 private:
  RecordStore& store_;
  const std::string data_dir_;
};

}  // namespace trtwatch::builds
