// UTF-8 <-> UTF-16 for the wide-character Win32 calls, and Win32 error texts.
// trtwatch keeps every string UTF-8; only these functions see wchar_t.
#pragma once

#include <string>

namespace trtwatch::win32 {

std::wstring Widen(const std::string& utf8);
std::string Narrow(const std::wstring& wide);
// FormatMessageW's text for a GetLastError() code, without the trailing newline.
std::string ErrorText(unsigned long code);

}  // namespace trtwatch::win32
