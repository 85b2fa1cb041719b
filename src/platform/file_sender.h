// FileSender: a file's bytes sent to a socket by the kernel (Linux sendfile(2)), never
// copied through the process: how the service sends a multi-GiB engine at the speed
// of the page cache, as a web server does.
//
// The socket is the caller's, non-blocking: a send that would block says so, and the
// caller's event loop waits until the socket is writable, then sends again.
//
// Threading: one FileSender is used by one thread at a time. Implementation:
// platform/posix/file_sender.cc (POSIX only, as the service is).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace trtwatch {

class FileSender;

struct FileSenderOpening {
  std::unique_ptr<FileSender> sender;  // null when the file cannot be opened
  std::string error;                   // then: why, naming the file
};

class FileSender {
 public:
  // Opens `path` for reading, to send from byte `offset` on.
  static FileSenderOpening Open(const std::string& path, uint64_t offset);
  ~FileSender();
  FileSender(const FileSender&) = delete;
  FileSender& operator=(const FileSender&) = delete;

  struct Sent {
    enum class Outcome {
      kSent,        // `bytes` (> 0) went to the socket
      kWouldBlock,  // the socket's buffer is full: wait until it is writable
      kEndOfFile,   // the file ends before the bytes asked for
      kFailed,      // `error` (the peer went away, an I/O error)
    };
    Outcome outcome = Outcome::kFailed;
    size_t bytes = 0;
    std::string error;
  };
  // Sends up to `count` bytes from where the last send ended to the non-blocking
  // socket `socket_fd`.
  Sent SendTo(int socket_fd, size_t count);

 private:
  FileSender(int fd, uint64_t offset) : fd_(fd), offset_(offset) {}
  const int fd_;
  uint64_t offset_;
};

}  // namespace trtwatch
