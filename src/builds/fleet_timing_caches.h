// FleetTimingCaches: the service's timing caches, one per builder (TensorRT version)
// and GPU, in ARTIFACT_DIR/timing-caches, as the API shows them (GET /timing-caches,
// GET and DELETE /timing-caches/{name}). Builds read and merge them themselves, under
// each cache's lock (backends/timing_cache_file.h); this side lists, hands out and
// removes them.
//
// A download is a snapshot: a hard link to the cache as it is, taken under its lock,
// so a merge that replaces the cache (by rename) never changes bytes being sent, and
// its digest is the one the merge recorded (or, if that no longer fits the file,
// computed once). Snapshots live in timing-caches/.snapshots, one per cache version;
// older versions go once nobody can be reading them.
//
// Threading: the service's event-loop thread. Nothing here waits for a lock: a cache
// being merged answers "busy" (the merge takes well under a second).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "builds/artifacts/artifact_store.h"  // StoredFile
#include "runner/timing_cache_folder.h"

namespace trtwatch::builds {

class FleetTimingCaches {
 public:
  // `dir`: the caches' folder; empty: the service keeps none (--no-timing-caches).
  explicit FleetTimingCaches(std::string dir) : dir_(std::move(dir)) {}

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  std::vector<TimingCacheFile> List() const;

  enum class Outcome { kDone, kNotFound, kBusy, kFailed };

  // The cache `name` as a download: kDone (`path`: an unchanging snapshot, `file`: its
  // size and digest), kNotFound, kBusy while a build merges into it, kFailed.
  struct Download {
    Outcome outcome = Outcome::kFailed;
    std::string path;
    StoredFile file;
    std::string error;  // why not, and what to do
  };
  Download Snapshot(std::string_view name) const;

  // Removes the cache (its counts and snapshots too); builds that hold it already keep
  // their copy. kDone, kNotFound, kBusy or kFailed, with the error.
  struct Removal {
    Outcome outcome = Outcome::kFailed;
    std::string error;
  };
  Removal Remove(std::string_view name) const;

 private:
  std::string NotFoundError(std::string_view name) const;
  std::string snapshot_dir() const { return dir_ + "/.snapshots"; }
  // Removes the snapshots of `name` other than `keep`.
  void PruneSnapshots(const std::string& name, const std::string& keep) const;

  const std::string dir_;
};

}  // namespace trtwatch::builds
