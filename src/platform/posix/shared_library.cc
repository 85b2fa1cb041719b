#include "platform/shared_library.h"

#include <dlfcn.h>
#include <link.h>

#include "platform/cuda_driver.h"
#include "platform/nvml.h"

namespace trtwatch {

const char* const kNvmlLibrary = "libnvidia-ml.so.1";
const char* const kCudaDriverLibrary = "libcuda.so.1";

std::string TensorRtLibraryName(const std::string& base, int major) {
  return "lib" + base + ".so" + (major > 0 ? "." + std::to_string(major) : "");
}

std::unique_ptr<SharedLibrary> SharedLibrary::Open(const std::string& name, std::string* error, bool lazy) {
  // RTLD_LOCAL: the NVIDIA libraries' symbols stay out of the global namespace.
  void* handle = ::dlopen(name.c_str(), (lazy ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* message = ::dlerror();
    *error = message != nullptr ? message : ("cannot load " + name);
    return nullptr;
  }
  return std::unique_ptr<SharedLibrary>(new SharedLibrary(name, handle));
}

SharedLibrary::~SharedLibrary() { ::dlclose(handle_); }

void* SharedLibrary::Symbol(const char* name) const { return ::dlsym(handle_, name); }

std::string SharedLibrary::Path() const {
  struct link_map* map = nullptr;
  if (::dlinfo(handle_, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return name_;
}

}  // namespace trtwatch
