#include "platform/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/fs.h>
#include <sys/ioctl.h>
#endif

#include <cerrno>
#include <cstring>
#include <random>
#include <string_view>
#include <vector>

namespace trtwatch {

namespace {

std::string FolderOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Errno(int err) { return std::strerror(err); }

// ".NAME.trtwatch-" and 8 of [a-z0-9]: the name Create gives a temporary file.
bool IsAtomicTempName(std::string_view name) {
  constexpr std::string_view kMark = ".trtwatch-";
  constexpr size_t kSuffix = 8;
  if (name.size() < 1 + 1 + kMark.size() + kSuffix || name[0] != '.') return false;
  if (name.substr(name.size() - kSuffix - kMark.size(), kMark.size()) != kMark) return false;
  for (const char c : name.substr(name.size() - kSuffix)) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

}  // namespace

AtomicFile::AtomicFile(std::string target, std::string temp_path, int fd)
    : target_(std::move(target)), temp_path_(std::move(temp_path)), fd_(fd) {}

std::unique_ptr<AtomicFile> AtomicFile::Create(const std::string& target, std::string* error) {
  const std::string base = BaseOf(target);
  if (base.empty() || base == "." || base == "..") {
    *error = "\"" + target + "\" names a folder, not a file: give a file name";
    return nullptr;
  }
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    *error = "\"" + target + "\" is a folder: give a file name inside it";
    return nullptr;
  }
  const std::string folder = FolderOf(target);
  const std::string prefix = (folder == "." && target.find('/') == std::string::npos ? "" : folder + "/") + "." +
                             base + ".trtwatch-";
  // O_EXCL with a random suffix rather than mkstemp: mkstemp's 0600 would survive the
  // rename, while an engine should get the usual 0666 minus the umask.
  std::random_device random;
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string temp = prefix;
    for (int i = 0; i < 8; ++i) temp += kAlphabet[random() % (sizeof kAlphabet - 1)];
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      // Held while this object lives: RemoveAbandonedTempFiles leaves a locked file alone.
      ::flock(fd, LOCK_EX | LOCK_NB);
      return std::unique_ptr<AtomicFile>(new AtomicFile(target, std::move(temp), fd));
    }
    if (errno == EEXIST) continue;
    const int err = errno;
    *error = "cannot create a file in folder \"" + folder + "\": " + Errno(err);
    if (err == ENOENT) *error += " (create the folder first)";
    if (err == EACCES || err == EROFS) *error += " (choose a folder you can write to)";
    return nullptr;
  }
  *error = "cannot create a temporary file in folder \"" + folder + "\": too many name collisions";
  return nullptr;
}

AtomicFile::~AtomicFile() {
  if (!committed_) Discard();
}

void AtomicFile::Discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  ::unlink(temp_path_.c_str());
}

bool AtomicFile::Write(const void* data, size_t size, std::string* error) {
  if (fd_ < 0 || committed_) {
    *error = "write to \"" + target_ + "\" after it was closed";
    return false;
  }
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      *error = "cannot write \"" + target_ + "\": " + Errno(err);
      out_of_space_ = err == ENOSPC || err == EDQUOT;
      if (out_of_space_) *error += " (free some space in its folder or write elsewhere)";
      Discard();
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
  StartWriteback();
  return true;
}

bool AtomicFile::ShareFrom(const std::string& source) {
#ifdef __linux__
  if (fd_ < 0 || committed_ || written_ != 0) return false;
  const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return false;
  const bool shared = ::ioctl(fd_, FICLONE, in) == 0;
  ::close(in);
  return shared;
#else
  (void)source;
  return false;
#endif
}

bool AtomicFile::LinkFrom(const std::string& source) {
  if (fd_ < 0 || committed_ || written_ != 0) return false;
  const std::string link = temp_path_ + "-link";
  if (::link(source.c_str(), link.c_str()) != 0) return false;
  // The link takes the temporary name: Commit renames it over the target.
  if (::rename(link.c_str(), temp_path_.c_str()) != 0) {
    ::unlink(link.c_str());
    return false;
  }
  linked_ = true;
  return true;
}

bool AtomicFile::CopyFrom(const std::string& source, std::string* error) {
  CopiedPieces copied = CopyPieces(source, nullptr);
  if (!copied.ok) *error = std::move(copied.error);
  return copied.ok;
}

namespace {

// One piece of a copy: the kernel's (copy_file_range) while `*kernel_copy`, else read into
// `buffer`; the bytes appended (0: the source ended), or -1 with errno set. The first
// piece falls back to the buffer where the kernel cannot (older kernels, another file
// system, some file systems), or answers kCopyDeclined with nothing appended when
// `kernel_only`.
constexpr ssize_t kCopyWriteFailed = -2;
constexpr ssize_t kCopyDeclined = -3;
ssize_t CopyOnePiece(int in, int out, bool* kernel_copy, bool first, bool kernel_only, std::vector<char>* buffer,
                     const std::function<bool(const char*, size_t)>& write) {
  for (;;) {
#ifdef __linux__
    if (*kernel_copy) {
      const ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, AtomicFile::kCopyPiece, 0);
      if (n >= 0 || errno == EINTR) {
        if (n >= 0) return n;
        continue;
      }
      if (!first || (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)) return -1;
    }
#endif
    if (kernel_only) return kCopyDeclined;
    *kernel_copy = false;
    if (buffer->empty()) buffer->resize(size_t{1} << 20);
    ssize_t got = 0;
    while (static_cast<uint64_t>(got) < AtomicFile::kCopyPiece) {
      const ssize_t n = ::read(in, buffer->data(), buffer->size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return -1;
      if (n == 0) break;
      if (!write(buffer->data(), static_cast<size_t>(n))) return kCopyWriteFailed;  // Write said why
      got += n;
    }
    return got;
  }
}

}  // namespace

CopiedPieces AtomicFile::CopyPieces(const std::string& source, const std::function<void(uint64_t)>& copied,
                                    bool kernel_only) {
  CopiedPieces result;
  const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    result.error = "cannot open \"" + source + "\" to copy it: " + Errno(errno);
    Discard();
    return result;
  }
  bool kernel_copy = true;
  std::vector<char> buffer;
  const auto write = [&](const char* data, size_t size) { return Write(data, size, &result.error); };
  for (;;) {
    const ssize_t n = CopyOnePiece(in, fd_, &kernel_copy, result.bytes == 0, kernel_only, &buffer, write);
    if (n == kCopyWriteFailed) break;  // Write said why and discarded the file
    if (n == kCopyDeclined) {
      result.declined = true;
      break;
    }
    if (n < 0) {
      const int err = errno;
      result.error = "cannot copy \"" + source + "\" to \"" + target_ + "\": " + Errno(err);
      if (err == ENOSPC || err == EDQUOT) result.error += " (free some space in its folder or write elsewhere)";
      Discard();
      break;
    }
    if (n == 0) {
      result.ok = true;
      break;
    }
    result.bytes += static_cast<uint64_t>(n);
    if (kernel_copy) written_ += static_cast<uint64_t>(n);  // Write counted the buffer's itself
    StartWriteback();
    if (copied) copied(result.bytes);
  }
  ::close(in);
  return result;
}

void AtomicFile::StartWriteback() {
#ifdef __linux__
  constexpr uint64_t kWritebackEvery = uint64_t{8} << 20;
  if (written_ - writeback_started_ < kWritebackEvery) return;
  // Starts the range's writeback without waiting for it. A hint: an error here shows
  // again, and is reported, at Commit's fsync.
  ::sync_file_range(fd_, static_cast<off_t>(writeback_started_), static_cast<off_t>(written_ - writeback_started_),
                    SYNC_FILE_RANGE_WRITE);
  writeback_started_ = written_;
#endif
}

bool AtomicFile::FlushAndClose(std::string* error) {
  if (fd_ < 0 || committed_) {
    *error = "\"" + target_ + "\" was already closed";
    return false;
  }
  // Data first, then the name: after a crash either the old target or the whole new one.
  if (::fsync(fd_) != 0) {
    const int err = errno;
    *error = "cannot flush \"" + target_ + "\" to disk: " + Errno(err);
    out_of_space_ = err == ENOSPC || err == EDQUOT;
    Discard();
    return false;
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int err = errno;
    *error = "cannot close \"" + target_ + "\": " + Errno(err);
    out_of_space_ = err == ENOSPC || err == EDQUOT;
    Discard();
    return false;
  }
  return true;
}

// Makes the new name durable. Failure here cannot undo it; the file is in place.
static void FlushFolderOf(const std::string& target) {
  const int dir = ::open(FolderOf(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

bool AtomicFile::Commit(std::string* error) {
  if (!FlushAndClose(error)) return false;
  if (::rename(temp_path_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    *error = "cannot move the finished file into place at \"" + target_ + "\": " + Errno(err);
    Discard();
    return false;
  }
  committed_ = true;
  // rename(2) does nothing when both names are links to one file (a hit placed over
  // the same hit): the temporary name must not stay behind.
  if (linked_) ::unlink(temp_path_.c_str());
  FlushFolderOf(target_);
  return true;
}

bool AtomicFile::CommitIfAbsent() {
  std::string ignored;
  if (!FlushAndClose(&ignored)) return false;
  if (::link(temp_path_.c_str(), target_.c_str()) != 0) {  // EEXIST: another writer was first
    Discard();
    return false;
  }
  committed_ = true;
  ::unlink(temp_path_.c_str());
  FlushFolderOf(target_);
  return true;
}

int RemoveAbandonedTempFiles(const std::string& folder) {
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return 0;
  int removed = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (!IsAtomicTempName(entry->d_name)) continue;
    const std::string path = folder + "/" + entry->d_name;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) continue;
    struct stat st {};
    // A regular file nobody holds locked: its writer is gone.
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        ::unlink(path.c_str()) == 0) {
      ++removed;
    }
    ::close(fd);
  }
  ::closedir(dir);
  return removed;
}

bool ReadWholeFile(const std::string& path, std::string* data, std::string* error, int* error_number) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (error_number != nullptr) *error_number = err;
    *error = "cannot open \"" + path + "\": " + Errno(err);
    return false;
  }
  data->clear();
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      if (error_number != nullptr) *error_number = err;
      *error = "cannot read \"" + path + "\": " + Errno(err);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    data->append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

}  // namespace trtwatch
