#include "platform/attach_receiver.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>

#include "platform/posix/abstract_address.h"

namespace trtwatch {

namespace {

constexpr size_t kMaxMessage = 64 * 1024;

int ListenAt(const std::string& name) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_un address;
  const socklen_t length = AbstractAddress(name, &address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 || listen(fd, 64) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

AttachReceiver::AttachReceiver(std::string token, int pair_fd, int child_fd, int listen_fd)
    : token_(std::move(token)), child_fd_(child_fd), listen_fd_(listen_fd), open_{pair_fd} {}

AttachReceiver::~AttachReceiver() {
  CloseChildEnd();
  for (const int fd : open_) close(fd);
  if (listen_fd_ >= 0) close(listen_fd_);
}

std::unique_ptr<AttachReceiver> AttachReceiver::Open(const std::string& token) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) return nullptr;
  // The child's end is inherited: clear its close-on-exec.
  if (fcntl(fds[1], F_SETFD, 0) != 0 || fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0) {
    close(fds[0]);
    close(fds[1]);
    return nullptr;
  }
  // Without the listening address only processes that lost the descriptor go unwatched.
  const int listen_fd = ListenAt(RunAddressName(token));
  return std::unique_ptr<AttachReceiver>(new AttachReceiver(token, fds[0], fds[1], listen_fd));
}

void AttachReceiver::CloseChildEnd() {
  if (child_fd_ >= 0) close(child_fd_);
  child_fd_ = -1;
}

void AttachReceiver::Receive(int wake_fd, int timeout_ms, const std::function<void(std::string_view)>& on_message) {
  // poll skips negative descriptors: with none it is a sleep.
  std::vector<pollfd> entries{{wake_fd, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
  for (const int fd : open_) entries.push_back({fd, POLLIN, 0});
  if (poll(entries.data(), entries.size(), timeout_ms) <= 0) return;
  if (entries[1].revents != 0) {
    for (int accepted; (accepted = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) {
      open_.push_back(accepted);
    }
  }
  std::vector<int> still_open;
  for (size_t i = 2; i < entries.size(); ++i) {
    if (entries[i].revents == 0 || Drain(entries[i].fd, on_message)) {
      still_open.push_back(entries[i].fd);
    } else {
      close(entries[i].fd);
    }
  }
  for (size_t i = entries.size() - 2; i < open_.size(); ++i) still_open.push_back(open_[i]);  // accepted just now
  open_ = std::move(still_open);
}

bool AttachReceiver::Drain(int fd, const std::function<void(std::string_view)>& on_message) {
  static thread_local std::string buffer(kMaxMessage, '\0');
  for (;;) {
    // MSG_TRUNC: the whole length comes back, so that a message too large is dropped
    // whole rather than read cut.
    const ssize_t n = recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n > static_cast<ssize_t>(buffer.size())) continue;
    if (n > 0) {
      on_message(std::string_view(buffer.data(), static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0;  // 0: the peers are gone
  }
}

bool AttachReceiver::SendCancel(int pid, std::string_view message) const {
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un address;
  const socklen_t length = AbstractAddress(CancelAddressName(token_, pid), &address);
  const bool sent = sendto(fd, message.data(), message.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                           reinterpret_cast<sockaddr*>(&address), length) >= 0;
  close(fd);
  return sent;
}

}  // namespace trtwatch
