#include "platform/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trtwatch {

std::unique_ptr<FileLock> FileLock::Acquire(const std::string& lock_path, std::string* error) {
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    *error = "cannot open the lock file \"" + lock_path + "\": " + std::strerror(errno);
    return nullptr;
  }
  // flock locks belong to the open file description: two FileLocks on one path
  // exclude each other even inside one process.
  int rc;
  do {
    rc = ::flock(fd, LOCK_EX);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    *error = "cannot lock \"" + lock_path + "\": " + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<FileLock>(new FileLock(fd));
}

FileLock::~FileLock() { ::close(fd_); }  // closing releases the lock

}  // namespace trtwatch
