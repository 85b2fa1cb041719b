// Addresses in Linux's abstract socket namespace (nothing on disk to clean up), for
// the attach channel's two sides (attach_channel.cc, attach_receiver.cc).
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

namespace trtwatch {

inline socklen_t AbstractAddress(const std::string& name, sockaddr_un* address) {
  std::memset(address, 0, sizeof(*address));
  address->sun_family = AF_UNIX;
  const size_t length = std::min(name.size(), sizeof(address->sun_path) - 1);
  std::memcpy(address->sun_path + 1, name.data(), length);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + length);
}

// Where the run listens for processes that lost the inherited descriptor.
inline std::string RunAddressName(const std::string& token) { return "trtwatch-attach-" + token; }
// Where process `pid` listens for the run's cancels.
inline std::string CancelAddressName(const std::string& token, int pid) {
  return "trtwatch-attach-" + token + "-" + std::to_string(pid);
}

}  // namespace trtwatch
