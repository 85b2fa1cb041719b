// Test helper (Windows): runs a program in a new process group on this console and
// sends it CTRL_BREAK_EVENT after each given delay, the way a console delivers Ctrl+C
// to a program started from a script. Exits with the program's exit code.
//   ctrl_break.exe DELAY_MS[,DELAY_MS...] PROGRAM [ARGS...]
// (CTRL_C_EVENT cannot be aimed at one process group; Ctrl+Break can, and trtwatch
// treats both alike.)
#include <windows.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::wstring Quote(const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\"") == std::wstring::npos) return arg;
  std::wstring out = L"\"";
  for (wchar_t c : arg) {
    if (c == L'"') out += L'\\';
    out += c;
  }
  return out + L"\"";
}

}  // namespace

int main() {
  int argc = 0;
  wchar_t** argv = CommandLineToArgvW(GetCommandLineW(), &argc);
  if (argv == nullptr || argc < 3) {
    std::fprintf(stderr, "usage: ctrl_break DELAY_MS[,DELAY_MS...] PROGRAM [ARGS...]\n");
    return 2;
  }
  std::vector<DWORD> delays;
  for (wchar_t* p = argv[1]; *p != L'\0';) {
    delays.push_back(static_cast<DWORD>(std::wcstoul(p, &p, 10)));
    if (*p == L',') ++p;
  }
  std::wstring command;
  for (int i = 2; i < argc; ++i) command += (i > 2 ? L" " : L"") + Quote(argv[i]);

  // The child shares this console (made if there is none) and this process's
  // standard handles (the test's pipes).
  HANDLE std_handles[3] = {GetStdHandle(STD_INPUT_HANDLE), GetStdHandle(STD_OUTPUT_HANDLE),
                           GetStdHandle(STD_ERROR_HANDLE)};
  if (GetConsoleWindow() == nullptr) AllocConsole();
  for (HANDLE h : std_handles) {
    if (h != nullptr && h != INVALID_HANDLE_VALUE) SetHandleInformation(h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);
  }
  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = std_handles[0];
  startup.hStdOutput = std_handles[1];
  startup.hStdError = std_handles[2];
  PROCESS_INFORMATION process{};
  if (!CreateProcessW(nullptr, command.data(), nullptr, nullptr, TRUE, CREATE_NEW_PROCESS_GROUP, nullptr, nullptr,
                      &startup, &process)) {
    std::fprintf(stderr, "ctrl_break: cannot start the program (error %lu)\n", GetLastError());
    return 2;
  }
  for (DWORD delay : delays) {
    if (WaitForSingleObject(process.hProcess, delay) == WAIT_OBJECT_0) break;
    if (!GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, process.dwProcessId)) {
      std::fprintf(stderr, "ctrl_break: GenerateConsoleCtrlEvent failed (error %lu)\n", GetLastError());
    }
  }
  WaitForSingleObject(process.hProcess, INFINITE);
  DWORD code = 0;
  GetExitCodeProcess(process.hProcess, &code);
  return static_cast<int>(code);
}
