// FileLock: an exclusive lock on a lock file, held for the object's lifetime, so that
// processes sharing a file (builds sharing one timing cache) take turns at a
// read-modify-write of it, or so that only one process at a time owns a resource
// (the service's embedded record store).
//
// The lock is advisory (flock on POSIX; LockFileEx on Windows) and lives on its own lock file, never on the
// data file: the data file is replaced by rename, which would leave a lock on the
// old inode behind. The lock file is left in place (removing it would race with the
// next holder). Released by the destructor, or by the system if the process dies.
//
// Threading: each FileLock is used by one thread; locks taken through separate
// FileLock objects exclude each other, also within one process. Implementations:
// platform/posix/file_lock.cc (flock), platform/win32/file_lock.cc (LockFileEx).
#pragma once

#include <memory>
#include <string>

namespace trtwatch {

class FileLock;

// What TryAcquire found.
struct TryLockResult {
  enum class Outcome {
    kAcquired,  // `lock` holds it; this process's PID is written in the lock file
    kHeld,      // another holder has it: `holder_pid` as written in the file (0: not known yet)
    kError,     // the lock file could not be created or locked: `error`
  };
  Outcome outcome = Outcome::kError;
  std::unique_ptr<FileLock> lock;
  long holder_pid = 0;
  std::string error;
};

class FileLock {
 public:
  // Blocks until the lock on `lock_path` (created if absent) is held. Null with the
  // reason in `*error` when the file cannot be created or locked.
  static std::unique_ptr<FileLock> Acquire(const std::string& lock_path, std::string* error);
  // Takes the lock on `lock_path` (created 0600 if absent) without waiting, and
  // writes this process's PID in the file, so that a process refused it can say who
  // holds it.
  static TryLockResult TryAcquire(const std::string& lock_path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  const int fd_;
};

}  // namespace trtwatch
