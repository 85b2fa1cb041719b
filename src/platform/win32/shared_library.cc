#include "platform/shared_library.h"

#include <windows.h>

#include "platform/cuda_driver.h"
#include "platform/nvml.h"
#include "platform/win32/text.h"

namespace trtwatch {

const char* const kNvmlLibrary = "nvml.dll";
const char* const kCudaDriverLibrary = "nvcuda.dll";

std::string TensorRtLibraryName(const std::string& base, int major) {
  return base + (major > 0 ? "_" + std::to_string(major) : "") + ".dll";
}

std::unique_ptr<SharedLibrary> SharedLibrary::Open(const std::string& name, std::string* error, bool /*lazy*/) {
  // Windows binds every import at load time; `lazy` has no equivalent. No error box
  // for a missing dependency: the caller reports it.
  const UINT previous_mode = SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
  const HMODULE module = LoadLibraryW(win32::Widen(name).c_str());
  const DWORD err = GetLastError();
  SetErrorMode(previous_mode);
  if (module == nullptr) {
    *error = name + ": " + win32::ErrorText(err);
    return nullptr;
  }
  return std::unique_ptr<SharedLibrary>(new SharedLibrary(name, module));
}

SharedLibrary::~SharedLibrary() { FreeLibrary(static_cast<HMODULE>(handle_)); }

void* SharedLibrary::Symbol(const char* name) const {
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(handle_), name));
}

std::string SharedLibrary::Path() const {
  std::wstring path(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetModuleFileNameW(static_cast<HMODULE>(handle_), path.data(), static_cast<DWORD>(path.size()));
    if (n == 0) return name_;
    if (n < path.size()) {
      path.resize(n);
      return win32::Narrow(path);
    }
    path.resize(path.size() * 2);
  }
}

}  // namespace trtwatch
