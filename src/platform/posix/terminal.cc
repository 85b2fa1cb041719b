#include "platform/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

#include "platform/size_override.h"

namespace trtwatch {

bool IsTerminal(int fd) { return isatty(fd) == 1; }

TerminalSize QueryTerminalSize(int fd) {
  TerminalSize size;
  struct winsize ws = {};
  const bool asked = ioctl(fd, TIOCGWINSZ, &ws) == 0;
  if (asked && ws.ws_col > 0) size.columns = ws.ws_col;
  if (asked && ws.ws_row > 0) size.rows = ws.ws_row;
  if (const int columns = PositiveEnv("COLUMNS")) size.columns = columns;
  if (const int rows = PositiveEnv("LINES")) size.rows = rows;
  return size;
}

bool IsForeground(int fd) {
  const pid_t group = tcgetpgrp(fd);
  return group < 0 || group == getpgrp();  // not a terminal: nothing to protect
}

bool WriteAll(int fd, const char* data, unsigned long size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<unsigned long>(n);
  }
  return true;
}

bool TerminalNeedsTermVariable() { return true; }
bool TerminalTakesUtf8() { return false; }  // the locale says

// A POSIX terminal takes UTF-8 and escape sequences as they come.
ConsoleSetup::ConsoleSetup(bool /*escape_sequences*/) {}
ConsoleSetup::~ConsoleSetup() = default;
void RestoreConsole() noexcept {}

}  // namespace trtwatch
