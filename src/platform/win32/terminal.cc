#include "platform/terminal.h"

#include <fcntl.h>
#include <io.h>
#include <windows.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "platform/size_override.h"

namespace trtwatch {

namespace {

// The OS handle behind a C run-time descriptor (0, 1, 2), or null.
HANDLE HandleOf(int fd) {
  const intptr_t handle = _get_osfhandle(fd);
  return handle == -1 ? nullptr : reinterpret_cast<HANDLE>(handle);
}

// What the first ConsoleSetup changed, to put back. A process has one console.
struct SavedConsole {
  std::mutex mu;
  int users = 0;               // live ConsoleSetup objects
  UINT output_code_page = 0;   // 0: not changed
  HANDLE vt_handle = nullptr;  // stderr's console, when its mode was changed
  DWORD vt_mode = 0;           // its mode before
  int stdout_mode = -1;        // stdout's C run-time translation mode before, -1: unchanged
};

SavedConsole& Saved() {
  static SavedConsole* saved = new SavedConsole;  // never destroyed: used at exit
  return *saved;
}

void RestoreLocked(SavedConsole& saved) {
  if (saved.vt_handle != nullptr) {
    SetConsoleMode(saved.vt_handle, saved.vt_mode);
    saved.vt_handle = nullptr;
  }
  if (saved.output_code_page != 0) {
    SetConsoleOutputCP(saved.output_code_page);
    saved.output_code_page = 0;
  }
  if (saved.stdout_mode != -1) {
    std::fflush(stdout);
    _setmode(_fileno(stdout), saved.stdout_mode);
    saved.stdout_mode = -1;
  }
}

bool IsConsole(HANDLE handle, DWORD* mode) { return handle != nullptr && GetConsoleMode(handle, mode) != 0; }

}  // namespace

bool IsTerminal(int fd) {
  const HANDLE handle = HandleOf(fd);
  DWORD mode = 0;
  if (!IsConsole(handle, &mode)) return false;  // a pipe, a file, NUL: redirected
  if ((mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING) != 0) return true;
  // Ask whether the console accepts the flag (consoles before Windows 10 refuse it),
  // then leave the mode as it was: ConsoleSetup turns it on for the run.
  if (!SetConsoleMode(handle, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING)) return false;
  SetConsoleMode(handle, mode);
  return true;
}

TerminalSize QueryTerminalSize(int fd) {
  TerminalSize size;
  CONSOLE_SCREEN_BUFFER_INFO info{};
  const HANDLE handle = HandleOf(fd);
  if (handle != nullptr && GetConsoleScreenBufferInfo(handle, &info)) {
    // The visible window, not the buffer (which is often far taller, sometimes wider).
    const int columns = info.srWindow.Right - info.srWindow.Left + 1;
    const int rows = info.srWindow.Bottom - info.srWindow.Top + 1;
    if (columns > 0) size.columns = columns;
    if (rows > 0) size.rows = rows;
  }
  if (const int columns = PositiveEnv("COLUMNS")) size.columns = columns;
  if (const int rows = PositiveEnv("LINES")) size.rows = rows;
  return size;
}

bool IsForeground(int /*fd*/) { return true; }  // Windows consoles have no background jobs

bool WriteAll(int fd, const char* data, unsigned long size) {
  const HANDLE handle = HandleOf(fd);
  if (handle == nullptr) return false;
  while (size > 0) {
    DWORD written = 0;
    const DWORD chunk = size > (1ul << 30) ? (1ul << 30) : static_cast<DWORD>(size);
    if (!WriteFile(handle, data, chunk, &written, nullptr) || written == 0) return false;
    data += written;
    size -= written;
  }
  return true;
}

bool TerminalNeedsTermVariable() { return false; }
bool TerminalTakesUtf8() { return true; }

ConsoleSetup::ConsoleSetup(bool escape_sequences) {
  SavedConsole& saved = Saved();
  std::lock_guard<std::mutex> lock(saved.mu);
  ++saved.users;
  DWORD mode = 0;
  // UTF-8 for whatever reaches a console: trtwatch's text, the builder's phase names.
  const bool console = IsConsole(HandleOf(1), &mode) || IsConsole(HandleOf(2), &mode);
  if (console && saved.output_code_page == 0) {
    const UINT code_page = GetConsoleOutputCP();
    if (code_page != CP_UTF8 && code_page != 0 && SetConsoleOutputCP(CP_UTF8)) saved.output_code_page = code_page;
  }
  // stdout carries the JSON lines: "\n" as on every platform, not text mode's "\r\n".
  if (saved.stdout_mode == -1) {
    std::fflush(stdout);
    saved.stdout_mode = _setmode(_fileno(stdout), _O_BINARY);
  }
  const HANDLE err = HandleOf(2);
  if (escape_sequences && saved.vt_handle == nullptr && IsConsole(err, &mode) &&
      (mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING) == 0 &&
      SetConsoleMode(err, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING)) {
    saved.vt_handle = err;
    saved.vt_mode = mode;
  }
}

ConsoleSetup::~ConsoleSetup() {
  SavedConsole& saved = Saved();
  std::lock_guard<std::mutex> lock(saved.mu);
  if (--saved.users == 0) RestoreLocked(saved);
}

void RestoreConsole() noexcept {
  SavedConsole& saved = Saved();
  std::lock_guard<std::mutex> lock(saved.mu);
  RestoreLocked(saved);
}

}  // namespace trtwatch
