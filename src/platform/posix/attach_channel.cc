#include "platform/attach_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace trtwatch {

namespace {

constexpr size_t kMaxMessage = 64 * 1024;

// An abstract-namespace address (Linux): nothing on disk to clean up.
socklen_t CancelAddress(const std::string& token, int pid, sockaddr_un* address) {
  std::memset(address, 0, sizeof(*address));
  address->sun_family = AF_UNIX;
  const std::string name = "trtwatch-attach-" + token + "-" + std::to_string(pid);
  const size_t length = std::min(name.size(), sizeof(address->sun_path) - 1);
  std::memcpy(address->sun_path + 1, name.data(), length);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + length);
}

}  // namespace

std::optional<AttachChannel> AttachChannel::FromEnvironment() {
  const char* fd_text = std::getenv(kAttachFdVariable);
  const char* token = std::getenv(kAttachTokenVariable);
  if (fd_text == nullptr || token == nullptr) return std::nullopt;
  char* end = nullptr;
  const long fd = std::strtol(fd_text, &end, 10);
  if (end == fd_text || *end != '\0' || fd < 0 || fd > 65535) return std::nullopt;
  int type = 0;
  socklen_t length = sizeof(type);
  if (getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_SEQPACKET) {
    return std::nullopt;
  }
  return AttachChannel(static_cast<int>(fd), token);
}

ChannelSend AttachChannel::Send(std::string_view message) const {
  // MSG_NOSIGNAL: a run that died must not kill the program with SIGPIPE.
  const ssize_t sent = send(fd_, message.data(), message.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (sent >= 0) return ChannelSend::kSent;
  if (errno == EMSGSIZE) return ChannelSend::kTooLarge;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? ChannelSend::kFull : ChannelSend::kClosed;
}

struct CancelListener::Impl {
  int fd = -1;
  std::thread thread;
};

CancelListener::CancelListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CancelListener::~CancelListener() {
  // Wakes the receive; the thread ends on its error.
  shutdown(impl_->fd, SHUT_RDWR);
  if (impl_->thread.joinable()) impl_->thread.join();
  close(impl_->fd);
}

std::unique_ptr<CancelListener> CancelListener::Start(const std::string& token, int pid, Handler handler) {
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  sockaddr_un address;
  const socklen_t length = CancelAddress(token, pid, &address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0) {
    close(fd);
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->fd = fd;
  impl->thread = std::thread([fd, handler = std::move(handler)] {
    char buffer[256];
    for (;;) {
      const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n > 0) handler(std::string_view(buffer, static_cast<size_t>(n)));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
    }
  });
  return std::unique_ptr<CancelListener>(new CancelListener(std::move(impl)));
}

std::optional<AttachChannelPair> OpenAttachChannel() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) return std::nullopt;
  // The child's end is inherited: clear its close-on-exec.
  if (fcntl(fds[1], F_SETFD, 0) != 0 || fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0) {
    close(fds[0]);
    close(fds[1]);
    return std::nullopt;
  }
  return AttachChannelPair{fds[0], fds[1]};
}

bool ReceiveAttachMessages(int parent_fd, int wake_fd, int timeout_ms,
                           const std::function<void(std::string_view)>& on_message) {
  // poll skips a negative descriptor: with neither it is a sleep.
  pollfd entries[2] = {{parent_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
  if (poll(entries, 2, timeout_ms) <= 0 || parent_fd < 0 || entries[0].revents == 0) return true;
  static thread_local std::string buffer(kMaxMessage, '\0');
  for (;;) {
    // MSG_TRUNC: the whole length comes back, so that a message too large is dropped
    // whole rather than read cut.
    const ssize_t n = recv(parent_fd, buffer.data(), buffer.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n > static_cast<ssize_t>(buffer.size())) continue;
    if (n > 0) {
      on_message(std::string_view(buffer.data(), static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0;  // 0: every child's end is closed
  }
}

bool SendAttachCancel(const std::string& token, int pid, std::string_view message) {
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un address;
  const socklen_t length = CancelAddress(token, pid, &address);
  const bool sent = sendto(fd, message.data(), message.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                           reinterpret_cast<sockaddr*>(&address), length) >= 0;
  close(fd);
  return sent;
}

void CloseChannelEnd(int fd) { close(fd); }

int CurrentProcessId() { return static_cast<int>(getpid()); }

}  // namespace trtwatch
