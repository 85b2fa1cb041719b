// Process-wide settings a long-running server needs: as many open descriptors as the
// system lets it have, and broken connections reported as errors rather than by a
// signal that ends the process.
//
// Both change state of the whole process: call them once, early, from the thread
// that starts the server (before other threads open files or write to sockets).
// Implementation: platform/<os>/process_limits.cc.
#pragma once

#include <cstdint>

namespace trtwatch {

// Raises this process's limit on open files (descriptors: files, sockets, pipes) to
// the most the system allows it without privileges, and returns the limit now in
// force: INT32_MAX when there is none, 1024 when it cannot be read.
// POSIX: the soft RLIMIT_NOFILE is raised to the hard one. Windows: kernel handles
// have no such limit; the C runtime's stream limit is raised to its maximum and
// returned (a conservative figure).
int64_t RaiseOpenFileLimit();

// Writing to a pipe or socket whose reader has gone fails with an error (EPIPE)
// instead of ending the process with SIGPIPE. A no-op where there is no such signal
// (Windows).
void IgnoreBrokenPipe();

}  // namespace trtwatch
