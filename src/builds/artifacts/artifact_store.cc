#include "builds/artifacts/artifact_store.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "builds/model_paths.h"
#include "platform/atomic_file.h"
#include "platform/file_access.h"

namespace trtwatch::builds {

namespace fs = std::filesystem;

namespace {

std::string SidecarPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return folder + "/." + name + ".sha256";
}

// A sidecar "HEX SIZE" that still describes a file of `size` bytes.
std::optional<std::string> SidecarDigest(const std::string& path, uint64_t size) {
  std::string text, ignored;
  if (!ReadWholeFile(SidecarPath(path), &text, &ignored)) return std::nullopt;
  const size_t space = text.find(' ');
  if (space != 64 || !DigestFromHex(std::string_view(text).substr(0, 64))) return std::nullopt;
  if (std::strtoull(text.c_str() + space + 1, nullptr, 10) != size) return std::nullopt;
  return text.substr(0, 64);
}

std::optional<StoredFile> DescribeFile(const fs::directory_entry& entry, std::string* error) {
  StoredFile file;
  if (!FileDigest(entry.path().string(), &file, error)) return std::nullopt;
  return file;
}

constexpr char kOwnerFile[] = ".owner";
constexpr size_t kOwnerMax = 128;

// The model's owner: the file's one line, if it is at most kOwnerMax printable ASCII
// characters (a user's name); anything else is no owner.
std::string ReadOwner(const fs::path& folder) {
  std::ifstream in(folder / kOwnerFile, std::ios::binary);
  std::string text(kOwnerMax + 2, '\0');  // the name, its newline, and one more: too long
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (!text.empty() && text.back() == '\n') text.pop_back();
  const bool printable = std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 0x7f; });
  return printable && text.size() <= kOwnerMax ? text : "";
}

// The model's files, model.onnx first, then by name; its dotfiles are the store's own.
ModelInfo ReadModel(const fs::path& folder, std::string* error) {
  ModelInfo info;
  info.name = folder.filename().string();
  info.owner = ReadOwner(folder);
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.' || !entry.is_regular_file(ec)) continue;
    if (std::optional<StoredFile> file = DescribeFile(entry, error)) info.files.push_back(std::move(*file));
  }
  std::sort(info.files.begin(), info.files.end(), [](const StoredFile& a, const StoredFile& b) {
    return (a.name == kModelFileName) != (b.name == kModelFileName) ? a.name == kModelFileName : a.name < b.name;
  });
  info.complete = !info.files.empty() && info.files.front().name == kModelFileName;
  return info;
}

}  // namespace

bool FileDigest(const std::string& path, StoredFile* file, std::string* error) {
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) {
    *error = "\"" + path + "\" cannot be read: " + ec.message();
    return false;
  }
  file->name = fs::path(path).filename().string();
  file->size = size;
  if (std::optional<std::string> known = SidecarDigest(path, size)) {
    file->sha256 = *known;
    return true;
  }
  const FileSha256 hashed = Sha256OfFile(path);
  if (!hashed.digest) {
    *error = hashed.error;
    return false;
  }
  file->sha256 = HexOf(*hashed.digest);
  std::string ignored;  // a sidecar that cannot be written only costs a hash next time
  WriteDigestSidecar(path, *file, &ignored);
  return true;
}

bool WriteDigestSidecar(const std::string& path, const StoredFile& file, std::string* error) {
  return WriteFileAtomically(SidecarPath(path), file.sha256 + " " + std::to_string(file.size) + "\n", error);
}

void RemoveWithSidecar(const std::string& path) {
  std::remove(path.c_str());
  std::remove(SidecarPath(path).c_str());
}

Upload::Upload(std::unique_ptr<AtomicFile> file, std::string name, std::string uploader)
    : file_(std::move(file)), name_(std::move(name)), uploader_(std::move(uploader)) {}

Upload::~Upload() {
  if (committed_) return;
  const std::string folder = fs::path(file_->target()).parent_path().string();
  file_.reset();  // its temporary file goes
  std::error_code ec;
  fs::remove(folder, ec);  // rmdir: only where nothing else is in it (another upload, a model's files)
}

Status Upload::Write(std::string_view bytes) {
  std::string error;
  if (!file_->Write(bytes.data(), bytes.size(), &error)) {
    out_of_space_ = file_->out_of_space();
    return Status::Error(std::move(error));
  }
  sha_.Update(bytes);
  size_ += bytes.size();
  return OkStatus();
}

Upload::Outcome Upload::Commit(const std::optional<Sha256Digest>& expected, StoredFile* stored, std::string* error) {
  const Sha256Digest digest = sha_.Final();
  if (expected && *expected != digest) {
    *error = "the body's SHA-256 is " + HexOf(digest) + " but the request said " + HexOf(*expected) +
             "; nothing was stored: send the file again (it changed or was cut on the way)";
    return Outcome::kDigestMismatch;
  }
  *stored = StoredFile{name_, size_, HexOf(digest)};
  // The sidecar first: a file never appears without its digest.
  std::unique_ptr<AtomicFile> sidecar = AtomicFile::Create(SidecarPath(file_->target()), error);
  if (!sidecar) return Outcome::kFailed;
  const std::string line = stored->sha256 + " " + std::to_string(stored->size) + "\n";
  if (!sidecar->Write(line.data(), line.size(), error) || !sidecar->Commit(error)) {
    out_of_space_ = sidecar->out_of_space();
    return out_of_space_ ? Outcome::kNoSpace : Outcome::kFailed;
  }
  if (file_->Commit(error)) {
    committed_ = true;
    RecordOwnerIfFirst();
    return Outcome::kStored;
  }
  out_of_space_ = file_->out_of_space();
  std::remove(SidecarPath(file_->target()).c_str());  // it would describe the new bytes, not the old file
  return out_of_space_ ? Outcome::kNoSpace : Outcome::kFailed;
}

// After the file is in place, so that a failed upload leaves no owner behind. Where the
// owner cannot be written the model has none, which makes it an admin's.
void Upload::RecordOwnerIfFirst() const {
  const fs::path owner = fs::path(file_->target()).parent_path() / kOwnerFile;
  std::error_code ec;
  if (uploader_.empty() || fs::exists(fs::symlink_status(owner, ec))) return;
  std::string ignored;
  std::unique_ptr<AtomicFile> file = AtomicFile::Create(owner.string(), &ignored);
  const std::string line = uploader_ + "\n";
  // Two first uploads at once (replicas sharing the dir): the first owner written stays.
  if (file && file->Write(line.data(), line.size(), &ignored)) (void)file->CommitIfAbsent();
}

std::unique_ptr<ArtifactStore> ArtifactStore::Open(const std::string& dir, std::string* error) {
  std::vector<std::string> canonical;
  if (!MakePrivateFolder(dir, error) || !CanonicalRoots({dir}, &canonical, error)) {
    *error = "--artifact-dir \"" + dir + "\": " + *error;
    return nullptr;
  }
  std::unique_ptr<ArtifactStore> store(new ArtifactStore(canonical.front()));
  if (!MakePrivateFolder(store->models_dir(), error)) {
    *error = "--artifact-dir \"" + dir + "\": cannot make models/: " + *error;
    return nullptr;
  }
  if (!MakePrivateFolder(store->timing_caches_dir(), error)) {
    *error = "--artifact-dir \"" + dir + "\": cannot make timing-caches/: " + *error;
    return nullptr;
  }
  store->RemoveAbandonedUploads();
  return store;
}

std::unique_ptr<Upload> ArtifactStore::BeginUpload(std::string_view model, std::string_view file,
                                                   std::string_view uploader, bool* bad_name, std::string* error) {
  *error = ArtifactNameError(model, "model name");
  if (error->empty()) *error = ArtifactNameError(file, "file name");
  *bad_name = !error->empty();
  if (*bad_name) return nullptr;
  const std::string folder = models_dir() + "/" + std::string(model);
  if (!MakePrivateFolder(folder, error)) return nullptr;
  std::unique_ptr<AtomicFile> temp = AtomicFile::Create(folder + "/" + std::string(file), error);
  if (!temp) return nullptr;
  return std::unique_ptr<Upload>(new Upload(std::move(temp), std::string(file), std::string(uploader)));
}

void ArtifactStore::RemoveAbandonedUploads() {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(models_dir(), ec)) {
    if (!entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    const std::string folder = entry.path().string();
    if (const int removed = RemoveAbandonedTempFiles(folder); removed > 0) {
      std::fprintf(stderr, "trtwatch: removed %d unfinished upload(s) of model \"%s\" left by a process that stopped\n",
                   removed, entry.path().filename().string().c_str());
    }
    std::error_code ignored;
    fs::remove(entry.path(), ignored);  // rmdir: only a folder left empty (no model in it)
  }
}

std::optional<ModelInfo> ArtifactStore::Describe(std::string_view name, std::string* error) {
  if (!ArtifactNameError(name, "model name").empty()) return std::nullopt;
  const fs::path folder = fs::path(models_dir()) / std::string(name);
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(folder, ec))) return std::nullopt;
  ModelInfo info = ReadModel(folder, error);
  if (info.files.empty()) return std::nullopt;  // an upload under way, or nothing: no model
  return info;
}

std::optional<std::string> ArtifactStore::Owner(std::string_view name) const {
  if (!ArtifactNameError(name, "model name").empty()) return std::nullopt;
  const fs::path folder = fs::path(models_dir()) / std::string(name);
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
    const std::string file = entry.path().filename().string();
    if (!file.empty() && file[0] != '.' && entry.is_regular_file(ec)) return ReadOwner(folder);
  }
  return std::nullopt;
}

ArtifactStore::FileLookup ArtifactStore::FindFile(std::string_view model, std::string_view file) const {
  FileLookup found;
  const std::string shown = "\"" + std::string(model) + "/" + std::string(file) + "\"";
  if (!ArtifactNameError(model, "model name").empty() || !ArtifactNameError(file, "file name").empty()) {
    found.error = "no uploaded file " + shown + "; list a model's files with GET /models/NAME";
    return found;
  }
  found.path = (fs::path(models_dir()) / std::string(model) / std::string(file)).string();
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(found.path, ec))) {
    found.error = "no uploaded file " + shown + "; list a model's files with GET /models/NAME";
    return found;
  }
  StoredFile stored;
  if (!FileDigest(found.path, &stored, &found.error)) return found;
  found.file = std::move(stored);
  return found;
}

std::vector<ModelInfo> ArtifactStore::List(std::string* error) {
  std::vector<ModelInfo> models;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(models_dir(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!ArtifactNameError(name, "model name").empty() || !entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    ModelInfo info = ReadModel(entry.path(), error);
    if (!info.files.empty()) models.push_back(std::move(info));
  }
  if (ec) *error = "cannot list " + models_dir() + ": " + ec.message();
  std::sort(models.begin(), models.end(), [](const ModelInfo& a, const ModelInfo& b) { return a.name < b.name; });
  return models;
}

ArtifactStore::RemoveOutcome ArtifactStore::Remove(std::string_view name, std::string* error) {
  if (!Describe(name, error)) return RemoveOutcome::kNotFound;
  std::error_code ec;
  fs::remove_all(fs::path(models_dir()) / std::string(name), ec);
  if (!ec) return RemoveOutcome::kRemoved;
  *error = "cannot remove model \"" + std::string(name) + "\": " + ec.message();
  return RemoveOutcome::kFailed;
}

}  // namespace trtwatch::builds
