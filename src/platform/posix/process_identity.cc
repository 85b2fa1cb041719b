#include "platform/process_identity.h"

#include <unistd.h>

#include <filesystem>

extern char** environ;

namespace trtwatch {

ProcessIdentity ThisProcess() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);  // Linux
  return {host, static_cast<long>(::getpid()), ec ? std::string() : exe.string()};
}

std::vector<std::string> ThisEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

}  // namespace trtwatch
