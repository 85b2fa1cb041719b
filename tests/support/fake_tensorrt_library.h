// The TensorRT test double's stand-in libraries (build/fake_tensorrt/<major>), loaded at
// run time as TensorRT's are, once per test program. The test programs of the double
// link the fake libnvinfer too (to script it); dlopen finds that same copy.
// TRTWATCH_FAKE_TENSORRT_DIR and NV_TENSORRT_MAJOR come from the program's build.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "backends/tensorrt/library_names.h"
#include "backends/tensorrt/tensorrt_library.h"

namespace trtwatch::testing {

inline const trt::LoadedTensorRt& FakeTensorRt() {
  static const trt::LoadedTensorRt* const loaded = [] {
    std::string error;
    auto library = trt::LoadedTensorRt::Load(
        trt::LibraryNamesIn(TRTWATCH_FAKE_TENSORRT_DIR, trt::LibraryNamesForMajor(NV_TENSORRT_MAJOR)), &error);
    if (!library) ADD_FAILURE() << error;
    return library.release();
  }();
  return *loaded;
}

}  // namespace trtwatch::testing
