#include "platform/file_sender.h"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trtwatch {

FileSenderOpening FileSender::Open(const std::string& path, uint64_t offset) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {nullptr, "cannot open \"" + path + "\": " + std::strerror(errno)};
  return {std::unique_ptr<FileSender>(new FileSender(fd, offset)), ""};
}

FileSender::~FileSender() { ::close(fd_); }

FileSender::Sent FileSender::SendTo(int socket_fd, size_t count) {
  for (;;) {
    off_t at = static_cast<off_t>(offset_);
    const ssize_t n = ::sendfile(socket_fd, fd_, &at, count);
    if (n > 0) {
      offset_ += static_cast<uint64_t>(n);
      return {Sent::Outcome::kSent, static_cast<size_t>(n), ""};
    }
    if (n == 0) return {Sent::Outcome::kEndOfFile, 0, ""};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {Sent::Outcome::kWouldBlock, 0, ""};
    return {Sent::Outcome::kFailed, 0, std::strerror(errno)};
  }
}

}  // namespace trtwatch
