// SharedLibrary: a shared library loaded at run time (dlopen, LoadLibraryW), for the
// optional NVIDIA libraries (NVML, TensorRT) that trtwatch must run without.
//
// Threading: Open() and Symbol() are thread-safe (the dynamic loader locks); a
// SharedLibrary stays loaded until the object goes away. Implementation:
// platform/<os>/shared_library.cc.
#pragma once

#include <memory>
#include <string>

namespace trtwatch {

// The file name of TensorRT's library `base` ("nvinfer", "nvonnxparser") of major
// version `major` on this platform: libnvinfer.so.10, nvinfer_10.dll. Major 0: the
// unversioned name (libnvinfer.so, nvinfer.dll).
std::string TensorRtLibraryName(const std::string& base, int major);

class SharedLibrary {
 public:
  // `name` is a file name searched the loader's usual way, or a path. On failure
  // returns null with the loader's message in `*error`. `lazy` binds functions on
  // first call (for big libraries that are only probed).
  static std::unique_ptr<SharedLibrary> Open(const std::string& name, std::string* error, bool lazy = false);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The symbol's address, or null.
  void* Symbol(const char* name) const;
  // Where the loader found it (absolute path when it knows one).
  std::string Path() const;

  template <class F>
  F Function(const char* name) const {
    return reinterpret_cast<F>(Symbol(name));
  }

 private:
  SharedLibrary(std::string name, void* handle) : name_(std::move(name)), handle_(handle) {}
  const std::string name_;
  void* const handle_;
};

}  // namespace trtwatch
