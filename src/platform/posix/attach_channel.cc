#include "platform/attach_channel.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include <thread>

#include "platform/posix/abstract_address.h"

namespace trtwatch {

namespace {

// A connection of this process's own to the run's address.
std::optional<int> ConnectToRun(const std::string& token) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_un address;
  const socklen_t length = AbstractAddress(RunAddressName(token), &address);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), length) != 0) {
    close(fd);
    return std::nullopt;
  }
  return fd;
}

bool IsChannelSocket(long fd) {
  int type = 0;
  socklen_t length = sizeof(type);
  return fd >= 0 && fd <= 65535 && getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_TYPE, &type, &length) == 0 &&
         type == SOCK_SEQPACKET;
}

}  // namespace

std::optional<AttachChannel> AttachChannel::FromEnvironment() {
  const char* fd_text = std::getenv(kAttachFdVariable);
  const char* token = std::getenv(kAttachTokenVariable);
  if (fd_text == nullptr || token == nullptr) return std::nullopt;
  char* end = nullptr;
  const long fd = std::strtol(fd_text, &end, 10);
  if (end != fd_text && *end == '\0' && IsChannelSocket(fd)) return AttachChannel(static_cast<int>(fd), token);
  // The descriptor was closed (or reused) on the way here: the run's address.
  if (const std::optional<int> connected = ConnectToRun(token)) return AttachChannel(*connected, token);
  return std::nullopt;
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
  const socklen_t length = AbstractAddress(CancelAddressName(token, pid), &address);
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

int CurrentProcessId() { return static_cast<int>(getpid()); }

}  // namespace trtwatch
