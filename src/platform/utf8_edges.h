// UTF-8 at the process's edges: its command-line arguments and the files it opens by
// name. trtwatch keeps every string UTF-8; on Windows, main()'s argv and fopen() use
// the ANSI code page instead, which cannot spell most names, so these go through the
// wide-character calls there. Platform implementation: platform/<os>/utf8_edges.cc.
//
// Threading: both functions are safe from any thread.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace trtwatch {

// The process's arguments, UTF-8 (argv[0] first). POSIX: argv as given.
std::vector<std::string> Utf8Arguments(int argc, char** argv);

// std::fopen for a UTF-8 path. Null with errno set on failure.
std::FILE* OpenFile(const std::string& path, const char* mode);

}  // namespace trtwatch
