#include "platform/utf8_edges.h"

#include <windows.h>
#include <shellapi.h>

#include "platform/win32/text.h"

namespace trtwatch {

std::vector<std::string> Utf8Arguments(int argc, char** argv) {
  // The command line as typed (UTF-16), split by the rules main()'s argv follows.
  int count = 0;
  wchar_t** wide = CommandLineToArgvW(GetCommandLineW(), &count);
  if (wide == nullptr) return std::vector<std::string>(argv, argv + argc);
  std::vector<std::string> args;
  for (int i = 0; i < count; ++i) args.push_back(win32::Narrow(wide[i]));
  LocalFree(wide);
  return args;
}

std::FILE* OpenFile(const std::string& path, const char* mode) {
  return _wfopen(win32::Widen(path).c_str(), win32::Widen(mode).c_str());
}

}  // namespace trtwatch
