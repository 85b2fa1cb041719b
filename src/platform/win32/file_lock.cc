#include "platform/file_lock.h"

#include <fcntl.h>
#include <io.h>
#include <process.h>
#include <sys/stat.h>
#include <windows.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "platform/win32/text.h"

// Windows: the lock file is a C run-time descriptor opened with _wopen (so that
// FileLock keeps one int on every platform); LockFileEx takes an exclusive lock on its
// first byte through the descriptor's handle. Locks belong to the handle: two
// FileLocks on one path exclude each other inside one process too.

namespace trtwatch {

namespace {

int OpenLockFile(const std::string& lock_path, std::string* error) {
  const int fd = _wopen(win32::Widen(lock_path).c_str(), _O_RDWR | _O_CREAT | _O_BINARY | _O_NOINHERIT,
                        _S_IREAD | _S_IWRITE);
  if (fd < 0) *error = "cannot open the lock file \"" + lock_path + "\": " + std::strerror(errno);
  return fd;
}

// Locks a byte far past the PID text, so that the holder's PID stays readable.
bool LockByte(int fd, DWORD flags, DWORD* error_code) {
  OVERLAPPED where = {};
  where.Offset = 0x7fffffff;
  const HANDLE handle = reinterpret_cast<HANDLE>(_get_osfhandle(fd));
  if (LockFileEx(handle, flags, 0, 1, 0, &where)) return true;
  *error_code = GetLastError();
  return false;
}

long ReadHolderPid(int fd) {
  char text[32] = {};
  if (_lseek(fd, 0, SEEK_SET) != 0) return 0;
  const int n = _read(fd, text, sizeof text - 1);
  return n > 0 ? std::strtol(text, nullptr, 10) : 0;
}

void WriteOwnPid(int fd) {
  const std::string text = std::to_string(static_cast<long>(_getpid())) + "\n";
  if (_chsize(fd, 0) == 0 && _lseek(fd, 0, SEEK_SET) == 0) {
    [[maybe_unused]] const int n = _write(fd, text.data(), static_cast<unsigned>(text.size()));
  }
}

}  // namespace

std::unique_ptr<FileLock> FileLock::Acquire(const std::string& lock_path, std::string* error) {
  const int fd = OpenLockFile(lock_path, error);
  if (fd < 0) return nullptr;
  DWORD code = 0;
  if (!LockByte(fd, LOCKFILE_EXCLUSIVE_LOCK, &code)) {
    *error = "cannot lock \"" + lock_path + "\": " + win32::ErrorText(code);
    _close(fd);
    return nullptr;
  }
  return std::unique_ptr<FileLock>(new FileLock(fd));
}

TryLockResult FileLock::TryAcquire(const std::string& lock_path) {
  TryLockResult result;
  const int fd = OpenLockFile(lock_path, &result.error);
  if (fd < 0) return result;
  DWORD code = 0;
  if (!LockByte(fd, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, &code)) {
    if (code == ERROR_LOCK_VIOLATION) {
      result.outcome = TryLockResult::Outcome::kHeld;
      result.holder_pid = ReadHolderPid(fd);
    } else {
      result.error = "cannot lock \"" + lock_path + "\": " + win32::ErrorText(code);
    }
    _close(fd);
    return result;
  }
  WriteOwnPid(fd);
  result.outcome = TryLockResult::Outcome::kAcquired;
  result.lock.reset(new FileLock(fd));
  return result;
}

FileLock::~FileLock() { _close(fd_); }  // closing the handle releases the lock

}  // namespace trtwatch
