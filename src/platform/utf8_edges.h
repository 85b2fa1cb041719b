// UTF-8 at the process's edges: its command-line arguments and the files it opens by
// name. trtwatch keeps every string UTF-8; on Windows, main()'s argv and fopen() use
// the ANSI code page instead, which cannot spell most names, so these go through the
// wide-character calls there. Platform implementation: platform/<os>/utf8_edges.cc.
//
// Threading: both functions are safe from any thread.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace trtwatch {

// The process's arguments, UTF-8 (argv[0] first). POSIX: argv as given.
std::vector<std::string> Utf8Arguments(int argc, char** argv);

// std::fopen for a UTF-8 path. Null with errno set on failure.
std::FILE* OpenFile(const std::string& path, const char* mode);

// A UTF-8 path for the standard library's file streams and std::filesystem (a plain
// std::string would be read in the ANSI code page on Windows).
inline std::filesystem::path Utf8Path(const std::string& path) {
  return std::filesystem::path(std::u8string(path.begin(), path.end()));
}

}  // namespace trtwatch
