// The attach library's side of the channel to `trtwatch run` (docs/attach.md): an
// inherited socket (SOCK_SEQPACKET, so that every message of every process arrives
// whole) that carries event messages up, or, for a process that lost the inherited
// descriptor, a connection to the run's address; for cancels going down, one datagram
// address per attached process, named after the run's token and the pid. The run's
// side: platform/attach_receiver.h.
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
  // Null when the variables are unset or malformed, or neither the inherited
  // descriptor nor the run's address answers.
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

// This process's id (after a fork: the child's).
int CurrentProcessId();

}  // namespace trtwatch
