// The channel between `trtwatch run` and the attach library in the programs it runs
// (docs/attach.md): an inherited socket (SOCK_SEQPACKET, so that every message of every
// process arrives whole) that carries event messages up, and, for cancels going down,
// one datagram address per attached process, named after the run's token and the pid.
//
// The child's side never blocks: a message that does not fit now is reported, never
// waited for. Implementation: platform/posix/attach_channel.cc.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace trtwatch {

// The environment variables `trtwatch run` gives COMMAND.
inline constexpr const char* kAttachFdVariable = "TRTWATCH_ATTACH_FD";
inline constexpr const char* kAttachTokenVariable = "TRTWATCH_ATTACH_TOKEN";
inline constexpr const char* kAttachLibraryPathVariable = "TRTWATCH_ORIGINAL_LD_LIBRARY_PATH";

enum class ChannelSend { kSent, kFull, kClosed, kTooLarge };

// The attach library's end: the descriptor TRTWATCH_ATTACH_FD names.
class AttachChannel {
 public:
  // Null when the variable is unset, malformed or names no socket.
  static std::optional<AttachChannel> FromEnvironment();
  // One whole message, without waiting.
  [[nodiscard]] ChannelSend Send(std::string_view message) const;
  // The run's token (TRTWATCH_ATTACH_TOKEN), for the cancel address.
  const std::string& token() const { return token_; }

 private:
  AttachChannel(int fd, std::string token) : fd_(fd), token_(std::move(token)) {}
  int fd_;
  std::string token_;
};

// Receives the cancels `trtwatch run` sends to this process, on a thread of its own
// (blocked in a receive: it costs nothing between cancels). The handler gets the
// message's text (the build's number).
class CancelListener {
 public:
  using Handler = std::function<void(std::string_view message)>;
  // Null when the address cannot be bound (the run then cannot cancel this process).
  static std::unique_ptr<CancelListener> Start(const std::string& token, int pid, Handler handler);
  ~CancelListener();
  CancelListener(const CancelListener&) = delete;
  CancelListener& operator=(const CancelListener&) = delete;

 private:
  struct Impl;
  explicit CancelListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The run's side: a socket pair, the child's end inheritable.
struct AttachChannelPair {
  int parent_fd = -1;  // close-on-exec, non-blocking
  int child_fd = -1;   // inherited by COMMAND
};
[[nodiscard]] std::optional<AttachChannelPair> OpenAttachChannel();
// Waits up to `timeout_ms` for messages, or for `wake_fd` to become readable, and
// hands over what has arrived; false once every child's end is closed. A negative
// descriptor is not waited on.
[[nodiscard]] bool ReceiveAttachMessages(int parent_fd, int wake_fd, int timeout_ms,
                                         const std::function<void(std::string_view)>& on_message);
// Sends `message` to the cancel address of process `pid`; false when nothing listens.
[[nodiscard]] bool SendAttachCancel(const std::string& token, int pid, std::string_view message);

// Closes one end of the pair.
void CloseChannelEnd(int fd);

// This process's id (after a fork: the child's).
int CurrentProcessId();

}  // namespace trtwatch
