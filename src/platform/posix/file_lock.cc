#include "platform/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace trtwatch {

namespace {

int FlockRetrying(int fd, int operation) {
  int rc;
  do {
    rc = ::flock(fd, operation);
  } while (rc != 0 && errno == EINTR);
  return rc;
}

// The PID a holder wrote in the lock file; 0 if there is none (yet).
long ReadHolderPid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return 0;
  return std::strtol(text, nullptr, 10);
}

void WriteOwnPid(int fd) {
  const std::string text = std::to_string(static_cast<long>(::getpid())) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t n = ::pwrite(fd, text.data(), text.size(), 0);
  }
}

}  // namespace

std::unique_ptr<FileLock> FileLock::Acquire(const std::string& lock_path, std::string* error) {
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    *error = "cannot open the lock file \"" + lock_path + "\": " + std::strerror(errno);
    return nullptr;
  }
  // flock locks belong to the open file description: two FileLocks on one path
  // exclude each other even inside one process.
  if (FlockRetrying(fd, LOCK_EX) != 0) {
    *error = "cannot lock \"" + lock_path + "\": " + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<FileLock>(new FileLock(fd));
}

TryLockResult FileLock::TryAcquire(const std::string& lock_path) {
  TryLockResult result;
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    result.error = "cannot open the lock file \"" + lock_path + "\": " + std::strerror(errno);
    return result;
  }
  if (FlockRetrying(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      result.outcome = TryLockResult::Outcome::kHeld;
      result.holder_pid = ReadHolderPid(fd);
    } else {
      result.error = "cannot lock \"" + lock_path + "\": " + std::strerror(err);
    }
    ::close(fd);
    return result;
  }
  WriteOwnPid(fd);
  result.outcome = TryLockResult::Outcome::kAcquired;
  result.lock.reset(new FileLock(fd));
  return result;
}

FileLock::~FileLock() { ::close(fd_); }  // closing releases the lock

}  // namespace trtwatch
