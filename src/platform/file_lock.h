// FileLock: an exclusive lock on a lock file, held for the object's lifetime, so that
// processes sharing a file (builds sharing one timing cache) take turns at a
// read-modify-write of it.
//
// The lock is advisory (flock on POSIX) and lives on its own lock file, never on the
// data file: the data file is replaced by rename, which would leave a lock on the
// old inode behind. The lock file is left in place (removing it would race with the
// next holder). Released by the destructor, or by the system if the process dies.
//
// Threading: each FileLock is used by one thread; locks taken through separate
// FileLock objects exclude each other, also within one process. Implementation:
// platform/posix/file_lock.cc.
#pragma once

#include <memory>
#include <string>

namespace trtwatch {

class FileLock {
 public:
  // Blocks until the lock on `lock_path` (created if absent) is held. Null with the
  // reason in `*error` when the file cannot be created or locked.
  static std::unique_ptr<FileLock> Acquire(const std::string& lock_path, std::string* error);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  const int fd_;
};

}  // namespace trtwatch
