// The TensorRT backend as the rest of trtwatch sees it, without TensorRT's headers.
//
// CMake compiles tensorrt_backend.cc (TensorRT found, or the tests' double) or
// unavailable.cc (no TensorRT) behind these declarations; nothing else changes.
// Thread-compatible.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/timing_cache_file.h"  // NamedCache
#include "backends/tensorrt/build_options.h"

namespace trtwatch::trt {

// What this trtwatch binary was built with.
struct CompiledTensorRt {
  bool built = false;          // the TensorRT backend is part of this binary
  std::string header_version;  // NV_TENSORRT_MAJOR.MINOR.PATCH of the headers compiled against
  std::string root;            // where CMake found TensorRT
  int major = 0;               // NV_TENSORRT_MAJOR: the sonames loaded at run time follow it
  bool test_double = false;    // built against tests/tensorrt_double (tests only)
};
CompiledTensorRt CompiledWith();

// A backend for `options` (already through ResolveBuildOptions and CheckBuildPaths).
// Loads TensorRT's libraries (libnvinfer.so.MAJOR, libnvonnxparser.so.MAJOR) on first
// use. Null, with the reason and its fix in `*error`, when this binary has no
// TensorRT, TensorRT is not installed, or the options ask for what this TensorRT
// cannot do.
std::unique_ptr<Backend> MakeTensorRtBackend(const BuildOptions& options, std::string* error);

// TensorRT timing caches merged into one (ITimingCache::combine) by the TensorRT this
// process loads; an error where this binary has no TensorRT, it is not installed, or a
// cache is unreadable or of another GPU or version.
[[nodiscard]] Result<std::string> MergeTensorRtTimingCaches(const std::vector<NamedCache>& caches);

}  // namespace trtwatch::trt
