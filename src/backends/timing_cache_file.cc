#include "backends/timing_cache_file.h"

#include <cerrno>
#include <filesystem>
#include <memory>
#include <system_error>

#include "backends/timing_cache_use.h"
#include "platform/atomic_file.h"
#include "platform/file_access.h"
#include "platform/file_lock.h"
#include "platform/utf8_edges.h"

namespace trtwatch {

namespace {

constexpr size_t kMaxNamePart = 100;

std::string Slug(std::string_view text) {
  std::string slug;
  for (char c : text) {
    const bool kept = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.';
    if (c >= 'A' && c <= 'Z') {
      slug += static_cast<char>(c - 'A' + 'a');
    } else if (kept) {
      slug += c;
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
    if (slug.size() >= kMaxNamePart) break;
  }
  // Never a dotfile, nor a name a command line would take for an option.
  const size_t first = slug.find_first_not_of(".-");
  const size_t last = slug.find_last_not_of(".-");
  return first == std::string::npos ? "unknown" : slug.substr(first, last - first + 1);
}

// --timing-cache auto's folder, made (for this user only) where it is missing.
Status MakeAutoFolder(const std::string& folder) {
  std::error_code ec;
  std::filesystem::create_directories(Utf8Path(folder).parent_path(), ec);
  std::string error;
  if (MakePrivateFolder(folder, &error)) return OkStatus();
  return Status::Error("--timing-cache auto: cannot make \"" + folder + "\": " + error +
                       " (set XDG_STATE_HOME to a writable folder, or name a cache file)");
}

// The file's bytes; empty (and said so) where it does not exist yet.
Result<std::string> ReadCacheFile(const std::string& file, Monitor& monitor) {
  std::string bytes;
  std::string error;
  int read_errno = 0;
  if (ReadWholeFile(file, &bytes, &error, &read_errno)) return bytes;
  if (read_errno != ENOENT) return Status::Error("--timing-cache: " + error);
  monitor.Log(Severity::kInfo, "timing cache \"" + file + "\" does not exist yet; it will be written after the build");
  return std::string();
}

Status LoadCache(const TimingCacheFlags& flags, std::string_view bytes, TimingCacheOps& ops, Monitor& monitor) {
  if (ops.Load(bytes)) return OkStatus();
  const Status refused = Status::Error(
      "timing cache \"" + flags.file + "\" cannot be read by " + ops.Reader() +
      " (corrupt, or written by another version): delete it to start a new one, or drop --timing-cache-strict to "
      "replace it");
  if (bytes.empty() || flags.strict) return refused;
  monitor.Log(Severity::kWarning, "timing cache \"" + flags.file + "\" is unreadable by " + ops.Reader() +
                                      " (corrupt, or another version's): starting a new one, which replaces it "
                                      "after the build");
  return ops.Load({}) ? OkStatus() : refused;
}

// A folder's cache counts its builds; the caller holds the cache's lock where it
// writes the cache too, or `lock` is taken here.
void CountUse(const TimingCacheFlags& flags, CacheUseEvent event, Monitor& monitor, std::string_view written = {},
              bool locked = false) {
  if (flags.auto_folder.empty()) return;
  std::string error;
  std::unique_ptr<FileLock> lock;
  if (!locked) lock = FileLock::Acquire(TimingCacheLockFile(flags.file), &error);
  if (!locked && !lock) {
    monitor.Log(Severity::kWarning, "timing cache use not counted: " + error);
    return;
  }
  error = RecordTimingCacheUse(flags.file, flags.builder, flags.gpu, event, written);
  if (!error.empty()) monitor.Log(Severity::kWarning, "timing cache use not counted: " + error);
}

// The bytes to write: the build's cache merged into what the file holds now (`*same`:
// they are what it holds, so this build taught it nothing).
std::optional<std::string> MergedCache(const TimingCacheFlags& flags, TimingCacheOps& ops, Monitor& monitor,
                                       bool* same) {
  std::string current;
  std::string error;
  std::optional<std::string> data;
  if (ReadWholeFile(flags.file, &current, &error) && !current.empty()) {
    data = ops.MergedInto(current);
    if (!data) {
      monitor.Log(Severity::kWarning,
                  "timing cache \"" + flags.file + "\" now holds another device's or version's cache: replacing it");
    }
  }
  if (!data) data = ops.Serialize();
  if (!data) monitor.Log(Severity::kWarning, "timing cache not saved: " + ops.Reader() + " could not serialize it");
  *same = data && *data == current;
  return data;
}

}  // namespace

std::string TimingCacheGpu(std::string_view name, int cc_major, int cc_minor) {
  return std::string(name) + " sm " + std::to_string(cc_major) + "." + std::to_string(cc_minor);
}

std::string AutoTimingCacheName(std::string_view builder, std::string_view gpu) {
  return Slug(builder) + "_" + Slug(gpu) + ".cache";
}

TimingCacheFlags WithCacheFile(TimingCacheFlags flags, std::string_view builder, std::string_view gpu) {
  if (flags.auto_folder.empty()) return flags;
  flags.file = flags.auto_folder + "/" + AutoTimingCacheName(builder, gpu);
  flags.builder = builder;
  flags.gpu = gpu;
  return flags;
}

Status AttachTimingCacheFile(const TimingCacheFlags& flags, TimingCacheOps& ops, Monitor& monitor) {
  if (!flags.auto_folder.empty()) {
    if (Status made = MakeAutoFolder(flags.auto_folder); !made.ok()) return made;
  }
  Result<std::string> bytes = ReadCacheFile(flags.file, monitor);
  if (!bytes.ok()) return bytes.status();
  if (Status loaded = LoadCache(flags, *bytes, ops, monitor); !loaded.ok()) return loaded;
  bool attached = ops.Attach(flags.ignore_mismatch);
  if (!attached && !flags.strict) {
    monitor.Log(Severity::kWarning,
                "timing cache \"" + flags.file +
                    "\" was made on another GPU, CUDA or TensorRT version: using it anyway, as trtexec does "
                    "(its timings may not fit this GPU; --timing-cache-strict refuses such a cache)");
    attached = ops.Attach(/*ignore_mismatch=*/true);
  }
  if (attached) {
    CountUse(flags, CacheUseEvent::kServed, monitor);
    return OkStatus();
  }
  return Status::Error("timing cache \"" + flags.file +
                       "\" was made on another GPU, CUDA or TensorRT version: delete it to start a new one, or drop "
                       "--timing-cache-strict to use it anyway");
}

void SaveTimingCacheFile(const TimingCacheFlags& flags, TimingCacheOps& ops, Monitor& monitor) {
  std::string error;
  const std::unique_ptr<FileLock> lock = FileLock::Acquire(TimingCacheLockFile(flags.file), &error);
  if (!lock) {
    monitor.Log(Severity::kWarning, "timing cache not saved: " + error);
    return;
  }
  bool same = false;
  const std::optional<std::string> data = MergedCache(flags, ops, monitor, &same);
  if (!data || same) return;  // nothing new: the file, its time and its counts stay
  if (flags.max_bytes > 0 && data->size() > flags.max_bytes) {
    monitor.Log(Severity::kWarning, "timing cache \"" + flags.file + "\" kept as it was: with this build's timings it "
                                    "would hold " + std::to_string(data->size()) + " bytes, past its bound of " +
                                    std::to_string(flags.max_bytes) +
                                    " (--timing-cache-max-size; remove the cache to start a new one)");
    return;
  }
  if (!WriteFileAtomically(flags.file, *data, &error)) {
    monitor.Log(Severity::kWarning, "timing cache not saved: " + error);
    return;
  }
  CountUse(flags, CacheUseEvent::kContributed, monitor, *data, /*locked=*/true);
}

Result<std::string> MergeTimingCaches(const std::vector<NamedCache>& caches, TimingCacheOps& ops) {
  if (caches.empty()) return Status::Error("no timing cache to merge");
  const NamedCache& first = caches.front();
  if (first.bytes.empty() || !ops.Load(first.bytes) || !ops.Attach(/*ignore_mismatch=*/true)) {
    return Status::Error("\"" + first.name + "\" cannot be read by " + ops.Reader() + " (corrupt, or not a timing cache)");
  }
  for (size_t i = 1; i < caches.size(); ++i) {
    const std::optional<std::string> merged = ops.MergedInto(caches[i].bytes);
    if (!merged) {
      return Status::Error("\"" + caches[i].name + "\" is not a timing cache of the GPU and version of \"" + first.name +
                           "\" (or not one " + ops.Reader() + " reads): a cache holds one GPU's timings, so merge "
                           "only caches of one GPU and version");
    }
    if (!ops.Load(*merged) || !ops.Attach(/*ignore_mismatch=*/true)) {
      return Status::Error(ops.Reader() + " cannot read back the merge of \"" + caches[i].name + "\"");
    }
  }
  std::optional<std::string> bytes = ops.Serialize();
  if (!bytes) return Status::Error(ops.Reader() + " could not serialize the merged cache");
  return std::move(*bytes);
}

}  // namespace trtwatch
