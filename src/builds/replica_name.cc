#include "builds/replica_name.h"

#include <algorithm>
#include <iterator>

#include "protocol/utf8.h"

namespace trtwatch::builds {

namespace {

bool IsReplicaNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

}  // namespace

std::string ReplicaNameError(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= kMaxReplicaName &&
                  std::all_of(name.begin(), name.end(), IsReplicaNameChar);
  if (ok) return "";
  return "--replica \"" + ValidBoundedText(name, kMaxReplicaName) +
         "\" is no replica name: give 1 to 64 letters, digits, '.', '_' or '-' (e.g. --replica gpu-host-1)";
}

std::string DefaultReplicaName(const std::string& host_name, long pid) {
  const std::string suffix = "-" + std::to_string(pid);
  std::string host;
  std::copy_if(host_name.begin(), host_name.end(), std::back_inserter(host), IsReplicaNameChar);
  if (host.empty()) host = "trtwatch";
  host.resize(std::min(host.size(), kMaxReplicaName - suffix.size()));
  return host + suffix;
}

}  // namespace trtwatch::builds
