// Terminal facts: is a stream a terminal, how large is it; and the console set-up a
// run needs on Windows. The platform's implementation is chosen by CMake
// (platform/posix/terminal.cc, platform/win32/terminal.cc).
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

// A terminal that understands escape sequences. POSIX: isatty(fd). Windows: a console
// (not redirected) whose virtual terminal processing is on or can be turned on; an
// old console that cannot is not one, so `auto` gives plain output there.
bool IsTerminal(int fd);

// COLUMNS / LINES when set to a positive number, else the terminal's own size
// (TIOCGWINSZ on `fd`; on Windows the console screen buffer's visible window), else 80x24.
TerminalSize QueryTerminalSize(int fd);

// True when this process is in the foreground process group of the terminal `fd`
// (a job moved to the background with `bg` must not draw over the shell).
bool IsForeground(int fd);

// Writes all of `size` bytes to `fd`, retrying short writes and EINTR. Returns false
// on an error (the terminal went away). Safe to call while other threads run.
bool WriteAll(int fd, const char* data, unsigned long size);

// How this platform's terminals are recognised. POSIX: TERM names the terminal (unset
// or "dumb": not smart) and the locale says whether it takes UTF-8. Windows consoles
// set neither: a console that passes IsTerminal is smart unless TERM says "dumb", and
// takes UTF-8 (ConsoleSetup switches its output code page).
bool TerminalNeedsTermVariable();
bool TerminalTakesUtf8();

// ConsoleSetup: what a run needs from the console while it lives. Windows: UTF-8
// output code page on a console, stdout in binary mode (JSON lines end in "\n", not
// "\r\n"), and with `escape_sequences` virtual terminal processing on stderr; the
// previous code page and modes come back when the last ConsoleSetup goes away, or
// from RestoreConsole(). POSIX terminals need nothing.
class ConsoleSetup {
 public:
  explicit ConsoleSetup(bool escape_sequences);
  ~ConsoleSetup();
  ConsoleSetup(const ConsoleSetup&) = delete;
  ConsoleSetup& operator=(const ConsoleSetup&) = delete;
};

// Puts the console back as it was before the first ConsoleSetup, now: for a forced
// exit (_Exit runs no destructors). Safe from any thread, and more than once.
void RestoreConsole() noexcept;

}  // namespace trtwatch
