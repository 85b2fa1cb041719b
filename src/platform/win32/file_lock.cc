#include "platform/file_lock.h"

#include <fcntl.h>
#include <io.h>
#include <windows.h>

#include <cerrno>
#include <cstring>

#include "platform/win32/text.h"

// Windows: LockFileEx on the whole lock file, through the C run-time descriptor's
// handle. A locked range cannot be read by others, so a refused TryAcquire cannot
// name the holder (holder_pid stays 0).

namespace trtwatch {

namespace {

bool LockWhole(int fd, DWORD flags) {
  OVERLAPPED overlapped{};
  const HANDLE handle = reinterpret_cast<HANDLE>(_get_osfhandle(fd));
  return LockFileEx(handle, LOCKFILE_EXCLUSIVE_LOCK | flags, 0, MAXDWORD, MAXDWORD, &overlapped) != 0;
}

int OpenLockFile(const std::string& lock_path, std::string* error) {
  const int fd = _wopen(win32::Widen(lock_path).c_str(), _O_RDWR | _O_CREAT | _O_BINARY | _O_NOINHERIT, 0666);
  if (fd < 0) *error = "cannot open the lock file \"" + lock_path + "\": " + std::strerror(errno);
  return fd;
}

}  // namespace

std::unique_ptr<FileLock> FileLock::Acquire(const std::string& lock_path, std::string* error) {
  const int fd = OpenLockFile(lock_path, error);
  if (fd < 0) return nullptr;
  if (!LockWhole(fd, 0)) {
    *error = "cannot lock \"" + lock_path + "\": " + win32::ErrorText(GetLastError());
    _close(fd);
    return nullptr;
  }
  return std::unique_ptr<FileLock>(new FileLock(fd));
}

TryLockResult FileLock::TryAcquire(const std::string& lock_path) {
  TryLockResult result;
  const int fd = OpenLockFile(lock_path, &result.error);
  if (fd < 0) return result;
  if (!LockWhole(fd, LOCKFILE_FAIL_IMMEDIATELY)) {
    const DWORD err = GetLastError();
    if (err == ERROR_LOCK_VIOLATION || err == ERROR_IO_PENDING) {
      result.outcome = TryLockResult::Outcome::kHeld;
    } else {
      result.error = "cannot lock \"" + lock_path + "\": " + win32::ErrorText(err);
    }
    _close(fd);
    return result;
  }
  result.outcome = TryLockResult::Outcome::kAcquired;
  result.lock.reset(new FileLock(fd));
  return result;
}

FileLock::~FileLock() {
  OVERLAPPED overlapped{};
  UnlockFileEx(reinterpret_cast<HANDLE>(_get_osfhandle(fd_)), 0, MAXDWORD, MAXDWORD, &overlapped);
  _close(fd_);
}

}  // namespace trtwatch
