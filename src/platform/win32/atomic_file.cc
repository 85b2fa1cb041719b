#include "platform/atomic_file.h"

#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>
#include <windows.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

#include "platform/win32/text.h"

// Windows: the temporary file is a C run-time descriptor opened with _wopen (binary,
// not inherited), flushed with _commit (FlushFileBuffers), and moved over the target
// with MoveFileExW(MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH), which replaces
// an existing file and returns only once the move reached the disk. Paths are UTF-8,
// converted to UTF-16 for the calls.

namespace trtwatch {

namespace {

size_t LastSeparator(const std::string& path) {
  const size_t slash = path.find_last_of("/\\");
  // "C:name" is relative to drive C's current folder: the colon ends the folder part.
  if (slash == std::string::npos && path.size() >= 2 && path[1] == ':') return 1;
  return slash;
}

std::string FolderOf(const std::string& path) {
  const size_t slash = LastSeparator(path);
  if (slash == std::string::npos) return ".";
  if (slash == 1 && path[1] == ':') return path.substr(0, 2);
  if (slash == 0 || (slash == 2 && path[1] == ':')) return path.substr(0, slash + 1);  // "\" or "C:\"
  return path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  const size_t slash = LastSeparator(path);
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Errno(int err) { return std::strerror(err); }

}  // namespace

AtomicFile::AtomicFile(std::string target, std::string temp_path, int fd)
    : target_(std::move(target)), temp_path_(std::move(temp_path)), fd_(fd) {}

std::unique_ptr<AtomicFile> AtomicFile::Create(const std::string& target, std::string* error) {
  const std::string base = BaseOf(target);
  if (base.empty() || base == "." || base == "..") {
    *error = "\"" + target + "\" names a folder, not a file: give a file name";
    return nullptr;
  }
  const DWORD attributes = GetFileAttributesW(win32::Widen(target).c_str());
  if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0) {
    *error = "\"" + target + "\" is a folder: give a file name inside it";
    return nullptr;
  }
  const std::string folder = FolderOf(target);
  const size_t slash = LastSeparator(target);
  const std::string prefix = (slash == std::string::npos ? "" : target.substr(0, slash + 1)) + "." + base + ".trtwatch-";
  std::random_device random;
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string temp = prefix;
    for (int i = 0; i < 8; ++i) temp += kAlphabet[random() % (sizeof kAlphabet - 1)];
    const int fd = _wopen(win32::Widen(temp).c_str(), _O_WRONLY | _O_CREAT | _O_EXCL | _O_BINARY | _O_NOINHERIT,
                          _S_IREAD | _S_IWRITE);
    if (fd >= 0) return std::unique_ptr<AtomicFile>(new AtomicFile(target, std::move(temp), fd));
    if (errno == EEXIST) continue;
    const int err = errno;
    *error = "cannot create a file in folder \"" + folder + "\": " + Errno(err);
    if (err == ENOENT) *error += " (create the folder first)";
    if (err == EACCES) *error += " (choose a folder you can write to)";
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
    _close(fd_);
    fd_ = -1;
  }
  DeleteFileW(win32::Widen(temp_path_).c_str());
}

bool AtomicFile::Write(const void* data, size_t size, std::string* error) {
  if (fd_ < 0 || committed_) {
    *error = "write to \"" + target_ + "\" after it was closed";
    return false;
  }
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const unsigned chunk = size > (1u << 30) ? (1u << 30) : static_cast<unsigned>(size);
    const int n = _write(fd_, p, chunk);
    if (n < 0) {
      const int err = errno;
      *error = "cannot write \"" + target_ + "\": " + Errno(err);
      out_of_space_ = err == ENOSPC;
      if (out_of_space_) *error += " (free some space in its folder or write elsewhere)";
      Discard();
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool AtomicFile::FlushAndClose(std::string* error) {
  if (fd_ < 0 || committed_) {
    *error = "\"" + target_ + "\" was already closed";
    return false;
  }
  // Data first, then the name: after a crash either the old target or the whole new one.
  if (_commit(fd_) != 0) {
    const int err = errno;
    *error = "cannot flush \"" + target_ + "\" to disk: " + Errno(err);
    Discard();
    return false;
  }
  const int fd = fd_;
  fd_ = -1;
  if (_close(fd) != 0) {
    const int err = errno;
    *error = "cannot close \"" + target_ + "\": " + Errno(err);
    Discard();
    return false;
  }
  return true;
}

bool AtomicFile::Commit(std::string* error) {
  if (!FlushAndClose(error)) return false;
  if (!MoveFileExW(win32::Widen(temp_path_).c_str(), win32::Widen(target_).c_str(),
                   MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
    const DWORD err = GetLastError();
    *error = "cannot move the finished file into place at \"" + target_ + "\": " + win32::ErrorText(err);
    if (err == ERROR_ACCESS_DENIED || err == ERROR_SHARING_VIOLATION) {
      *error += " (is it open in another program?)";
    }
    Discard();
    return false;
  }
  committed_ = true;
  return true;
}

bool AtomicFile::CommitIfAbsent() {
  std::string ignored;
  if (!FlushAndClose(&ignored)) return false;
  // Without MOVEFILE_REPLACE_EXISTING the move fails where the target exists.
  if (!MoveFileExW(win32::Widen(temp_path_).c_str(), win32::Widen(target_).c_str(), MOVEFILE_WRITE_THROUGH)) {
    Discard();
    return false;
  }
  committed_ = true;
  return true;
}

// An AtomicFile's temporary file is open (without FILE_SHARE_DELETE) while it lives:
// DeleteFileW fails on it, and succeeds on one whose writer is gone.
int RemoveAbandonedTempFiles(const std::string& folder) {
  WIN32_FIND_DATAW found;
  const std::string pattern = folder + "\\.*.trtwatch-*";
  HANDLE search = FindFirstFileW(win32::Widen(pattern).c_str(), &found);
  if (search == INVALID_HANDLE_VALUE) return 0;
  int removed = 0;
  do {
    if ((found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0) continue;
    const std::string path = folder + "\\" + win32::Narrow(found.cFileName);
    if (DeleteFileW(win32::Widen(path).c_str())) ++removed;
  } while (FindNextFileW(search, &found));
  FindClose(search);
  return removed;
}

// Windows has no reflink through this API, and a hard link would make the target
// share later writes to the source: both are declined, so the bytes are copied.
bool AtomicFile::ShareFrom(const std::string&) { return false; }

bool AtomicFile::LinkFrom(const std::string&) { return false; }

bool AtomicFile::CopyFrom(const std::string& source, std::string* error) {
  CopiedPieces copied = CopyPieces(source, nullptr);
  if (!copied.ok) *error = std::move(copied.error);
  return copied.ok;
}

CopiedPieces AtomicFile::CopyPieces(const std::string& source, const std::function<void(uint64_t)>& copied,
                                    bool kernel_only) {
  CopiedPieces result;
  if (kernel_only) {  // no kernel copy through this API here
    result.declined = true;
    return result;
  }
  const int in = _wopen(win32::Widen(source).c_str(), _O_RDONLY | _O_BINARY | _O_NOINHERIT);
  if (in < 0) {
    result.error = "cannot open \"" + source + "\" to copy it: " + Errno(errno);
    Discard();
    return result;
  }
  std::vector<char> buffer(size_t{1} << 20);
  uint64_t since_piece = 0;
  for (;;) {
    const int n = _read(in, buffer.data(), static_cast<unsigned>(buffer.size()));
    if (n < 0) {
      result.error = "cannot read \"" + source + "\": " + Errno(errno);
      Discard();
      break;
    }
    if (n > 0 && !Write(buffer.data(), static_cast<size_t>(n), &result.error)) break;
    result.bytes += static_cast<uint64_t>(n);
    since_piece += static_cast<uint64_t>(n);
    if (copied && (n == 0 ? since_piece > 0 : since_piece >= kCopyPiece)) {
      copied(result.bytes);
      since_piece = 0;
    }
    if (n == 0) {
      result.ok = true;
      break;
    }
  }
  _close(in);
  return result;
}

bool ReadWholeFile(const std::string& path, std::string* data, std::string* error, int* error_number) {
  const int fd = _wopen(win32::Widen(path).c_str(), _O_RDONLY | _O_BINARY | _O_NOINHERIT);
  if (fd < 0) {
    const int err = errno;
    if (error_number != nullptr) *error_number = err;
    *error = "cannot open \"" + path + "\": " + Errno(err);
    return false;
  }
  data->clear();
  char buffer[1 << 16];
  for (;;) {
    const int n = _read(fd, buffer, sizeof buffer);
    if (n < 0) {
      const int err = errno;
      if (error_number != nullptr) *error_number = err;
      *error = "cannot read \"" + path + "\": " + Errno(err);
      _close(fd);
      return false;
    }
    if (n == 0) break;
    data->append(buffer, static_cast<size_t>(n));
  }
  _close(fd);
  return true;
}

}  // namespace trtwatch
