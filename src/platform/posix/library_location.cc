#include "platform/library_location.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace trtwatch {

std::string PathOfLoadedCode(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return {};
  return info.dli_fname;
}

bool IsSameFile(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::vector<std::string> SystemLibraryFolders() {
  std::vector<std::string> folders;
  std::error_code error;
  std::vector<std::filesystem::path> confs;
  for (const auto& entry : std::filesystem::directory_iterator("/etc/ld.so.conf.d", error)) {
    if (entry.path().extension() == ".conf") confs.push_back(entry.path());
  }
  std::sort(confs.begin(), confs.end());  // the order ldconfig reads them in
  for (const auto& conf : confs) {
    std::ifstream in(conf);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] == '/') folders.push_back(line.substr(0, line.find_first_of(" \t#")));
    }
  }
  for (const char* folder : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
                             "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}) {
    folders.emplace_back(folder);
  }
  return folders;
}

}  // namespace trtwatch
