// Terminal facts: is a stream a terminal, how large is it. The platform's
// implementation is chosen by CMake (platform/posix/terminal.cc).
//
// Threading: every function is safe from any thread (they read the environment and
// ask the kernel; nothing is cached here). Callers re-read the size per frame or after
// a resize signal.
#pragma once

namespace trtwatch {

struct TerminalSize {
  int columns = 80;
  int rows = 24;
};

// isatty(fd).
bool IsTerminal(int fd);

// COLUMNS / LINES when set to a positive number, else the terminal's own size
// (TIOCGWINSZ on `fd`), else 80x24.
TerminalSize QueryTerminalSize(int fd);

// True when this process is in the foreground process group of the terminal `fd`
// (a job moved to the background with `bg` must not draw over the shell).
bool IsForeground(int fd);

// Writes all of `size` bytes to `fd`, retrying short writes and EINTR. Returns false
// on an error (the terminal went away). Safe to call while other threads run.
bool WriteAll(int fd, const char* data, unsigned long size);

}  // namespace trtwatch
