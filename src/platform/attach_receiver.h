// AttachReceiver: `trtwatch run`'s side of the attach channel (platform/attach_channel.h).
// The messages of every attached process arrive on the socket COMMAND inherits, or, for
// a process that lost that descriptor (Python's subprocess closes inherited
// descriptors by default), on a connection it makes to the run's own address, named
// after the run's token. Cancels go back to each process's address.
//
// Threading: one thread (the run's loop). Implementation: platform/posix/attach_receiver.cc.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace trtwatch {

class AttachReceiver {
 public:
  // Null when the sockets cannot be made (then COMMAND runs unwatched).
  static std::unique_ptr<AttachReceiver> Open(const std::string& token);
  ~AttachReceiver();
  AttachReceiver(const AttachReceiver&) = delete;
  AttachReceiver& operator=(const AttachReceiver&) = delete;

  // The descriptor COMMAND inherits; close the run's copy once COMMAND started.
  int child_fd() const { return child_fd_; }
  void CloseChildEnd();
  // Waits up to `timeout_ms` for messages, or for `wake_fd` (when >= 0) to become
  // readable, and hands over every message that has arrived.
  void Receive(int wake_fd, int timeout_ms, const std::function<void(std::string_view)>& on_message);
  // Sends `message` to the cancel address of process `pid`; false when nothing listens.
  [[nodiscard]] bool SendCancel(int pid, std::string_view message) const;

 private:
  AttachReceiver(std::string token, int pair_fd, int child_fd, int listen_fd);
  // Reads every waiting message of `fd`; false when its peers are all gone.
  bool Drain(int fd, const std::function<void(std::string_view)>& on_message);

  const std::string token_;
  int child_fd_;
  int listen_fd_;
  std::vector<int> open_;  // the pair's end and accepted connections, while open
};

}  // namespace trtwatch
