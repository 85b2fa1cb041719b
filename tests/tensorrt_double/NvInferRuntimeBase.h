// TEST DOUBLE, written from TensorRT's documented signatures: not NVIDIA's header.
// The base types of the 10.x API that trtwatch's backend names: AsciiChar, Dims,
// IVersionedInterface, ILogger.
#pragma once

#include <cstddef>
#include <cstdint>

#include "NvInferVersion.h"

// The version number the factory functions pass to the library: 9.x encodes
// major*1000 + minor*100 + patch, 10.x on major*10000 + minor*100 + patch.
#if NV_TENSORRT_MAJOR < 10
#define NV_TENSORRT_VERSION ((NV_TENSORRT_MAJOR * 1000) + (NV_TENSORRT_MINOR * 100) + NV_TENSORRT_PATCH)
#else
#define NV_TENSORRT_VERSION ((NV_TENSORRT_MAJOR * 10000L) + (NV_TENSORRT_MINOR * 100L) + NV_TENSORRT_PATCH)
#endif

namespace nvinfer1 {

using AsciiChar = char;

class Dims64 {
 public:
  static constexpr int32_t MAX_DIMS{8};
  int32_t nbDims;
  int64_t d[MAX_DIMS];
};
using Dims = Dims64;

struct InterfaceInfo {
  char const* kind;
  int32_t major;
  int32_t minor;
};

class IVersionedInterface {
 public:
  virtual InterfaceInfo getInterfaceInfo() const noexcept = 0;
  virtual ~IVersionedInterface() noexcept = default;

 protected:
  IVersionedInterface() = default;
  IVersionedInterface(IVersionedInterface const&) = default;
  IVersionedInterface& operator=(IVersionedInterface const&) & = default;
};

class ILogger {
 public:
  enum class Severity : int32_t { kINTERNAL_ERROR = 0, kERROR = 1, kWARNING = 2, kINFO = 3, kVERBOSE = 4 };
  virtual void log(Severity severity, AsciiChar const* msg) noexcept = 0;
  ILogger() = default;
  virtual ~ILogger() = default;

 protected:
  ILogger(ILogger const&) = default;
  ILogger& operator=(ILogger const&) & = default;
};

}  // namespace nvinfer1

extern "C" int32_t getInferLibVersion() noexcept;
