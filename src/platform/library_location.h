// Where loaded code lives, for the attach library that must find the real libnvinfer
// without finding itself (docs/attach.md). Implementation:
// platform/posix/library_location.cc.
#pragma once

#include <string>
#include <vector>

namespace trtwatch {

// The file of the shared library (or program) that holds `address`; empty if unknown.
std::string PathOfLoadedCode(const void* address);
// Both paths name one existing file (links followed).
bool IsSameFile(const std::string& a, const std::string& b);
// The folders the system's loader searches besides LD_LIBRARY_PATH: those of
// /etc/ld.so.conf.d/*.conf, then the default ones, in that order.
std::vector<std::string> SystemLibraryFolders();

}  // namespace trtwatch
