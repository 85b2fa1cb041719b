// The artifact store: the models clients upload (PUT /models/{name}) and the digests of
// every stored artifact (engines, timing caches, model files).
//
// Layout (docs/api.md, "Artifacts"), under --artifact-dir (default DATA_DIR/artifacts):
//
//   models/NAME/model.onnx        the model of PUT /models/NAME
//   models/NAME/FILE              its external-data files (PUT /models/NAME/FILE)
//   models/NAME/.FILE.sha256      digest sidecars: "HEX SIZE"
//   models/NAME/.owner            who uploaded its first file (a user's name), when the
//                                 service has users: they may replace or delete it
//   models/NAME/.FILE.trtwatch-*  an upload in progress (AtomicFile), never a model file
//   timing-caches/B_G.cache       the fleet's timing cache of builder B on GPU G, with
//                                 its .use and .lock (backends/timing_cache_file.h)
//
// Names follow one rule ([A-Za-z0-9._-]{1,128}, not "." or "..", no leading dot), so
// every dotfile in a model's folder is the store's own and is never listed. A file
// appears complete or not at all: bytes go to a temporary file in the same folder,
// renamed once they are all there and their digest checked.
//
// Threading: one thread at a time (the service's event-loop thread); the functions
// read and write the file system.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "builds/artifacts/background_sha256.h"
#include "builds/artifacts/model_names.h"
#include "core/result.h"
#include "platform/sha256.h"

namespace trtwatch {
class AtomicFile;
}

namespace trtwatch::builds {

struct StoredFile {
  std::string name;
  uint64_t size = 0;
  std::string sha256;  // hex
};

// The digest of the file `path` (a regular file the store keeps), from its sidecar
// (".NAME.sha256" next to it) when that matches the file's size, else computed and the
// sidecar written. False with the reason in `*error`.
bool FileDigest(const std::string& path, StoredFile* file, std::string* error);
// Writes the sidecar of `path` for a digest already known.
bool WriteDigestSidecar(const std::string& path, const StoredFile& file, std::string* error);
// Removes `path` and its sidecar (either may be missing).
void RemoveWithSidecar(const std::string& path);

struct ModelInfo {
  std::string name;
  std::string owner;      // who uploaded its first file; "" for none (no users then)
  bool complete = false;  // model.onnx is there: builds may name it
  std::vector<StoredFile> files;
};

// One file being received: bytes in, digest checked, then renamed into place.
class Upload {
 public:
  enum class Outcome { kStored, kDigestMismatch, kNoSpace, kFailed };
  // An upload not committed leaves nothing behind: not its temporary file, nor the
  // model's folder where it was the folder's first file (an empty folder is no model).
  ~Upload();
  Upload(const Upload&) = delete;
  Upload& operator=(const Upload&) = delete;

  // The error names the server's paths: for its log, not for the client.
  Status Write(std::string_view bytes);
  // Whether the last failure (of Write or Commit) was a full disk or quota.
  bool out_of_space() const { return out_of_space_; }
  uint64_t size() const { return size_; }
  // Checks the bytes against `expected` (when given) and renames the file into place;
  // kNoSpace where the disk was full.
  Outcome Commit(const std::optional<Sha256Digest>& expected, StoredFile* stored, std::string* error);

 private:
  friend class ArtifactStore;
  Upload(std::unique_ptr<AtomicFile> file, std::string name, std::string uploader);
  void RecordOwnerIfFirst() const;
  std::unique_ptr<AtomicFile> file_;
  std::string name_;
  std::string uploader_;  // "" where the service has no users
  BackgroundSha256 sha_;  // hashed beside the receiving thread
  uint64_t size_ = 0;
  bool committed_ = false;
  bool out_of_space_ = false;
};

class ArtifactStore {
 public:
  // `dir`: the artifact dir (made if missing). Open fails with the reason when it
  // cannot be made or is not a folder. It removes what uploads of a process killed
  // mid-upload left (their temporary files, a model folder left empty by them);
  // another live process's upload in a shared dir is left alone.
  static std::unique_ptr<ArtifactStore> Open(const std::string& dir, std::string* error);

  const std::string& dir() const { return dir_; }  // canonical
  std::string models_dir() const { return dir_ + "/models"; }
  // The fleet's timing caches (docs/api.md, "Timing caches"): the workers' shared folder.
  std::string timing_caches_dir() const { return dir_ + "/timing-caches"; }

  // Starts receiving `file` of model `model` (kModelFileName for the model itself) from
  // `uploader` ("" where the service has no users), who owns the model once it is the
  // first file stored. Null with the reason when a name breaks the rule (`*bad_name`
  // true) or the folder cannot be made.
  std::unique_ptr<Upload> BeginUpload(std::string_view model, std::string_view file, std::string_view uploader,
                                      bool* bad_name, std::string* error);
  // A model is a folder with at least one stored file: a folder whose only upload is
  // still under way (or failed) is none, neither described nor listed.
  std::optional<ModelInfo> Describe(std::string_view name, std::string* error);
  // The model's owner ("" for none) without reading its files' digests; nullopt where
  // there is no such model (no stored file yet).
  std::optional<std::string> Owner(std::string_view name) const;
  // One uploaded file of a model for a download: its path and digest (from its
  // sidecar, written when it was received), or why there is none.
  struct FileLookup {
    std::string path;
    std::optional<StoredFile> file;  // absent: `error` says why
    std::string error;
  };
  [[nodiscard]] FileLookup FindFile(std::string_view model, std::string_view file) const;
  std::vector<ModelInfo> List(std::string* error);
  enum class RemoveOutcome { kRemoved, kNotFound, kFailed };
  RemoveOutcome Remove(std::string_view name, std::string* error);

 private:
  explicit ArtifactStore(std::string dir) : dir_(std::move(dir)) {}
  void RemoveAbandonedUploads();
  const std::string dir_;
};

}  // namespace trtwatch::builds
