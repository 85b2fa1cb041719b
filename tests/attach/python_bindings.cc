// A stand-in for the `tensorrt` Python bindings, for `trtwatch run`'s tests: a shared
// module linked to libnvinfer.so.N (as the bindings are), which Python loads after
// loading the real library by absolute path with ctypes.CDLL (as the tensorrt_libs
// wheel does). Built per major version against the ABI test double.
#include "attach/build_one.h"

// Builds `count` engines; returns how many were built.
extern "C" __attribute__((visibility("default"))) int trtwatch_test_build(int count) {
  trtwatch_test::CountingLogger logger;
  int built = 0;
  for (int k = 0; k < count; ++k) {
    built += trtwatch_test::BuildOne(&createInferBuilder_INTERNAL, logger, nullptr, "serialized") ? 1 : 0;
  }
  return built;
}
