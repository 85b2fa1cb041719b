// The file names of TensorRT's shared libraries for one major version, as the
// loader finds them. No TensorRT header: doctor and the driver share it.
#pragma once

#include <string>

#include "platform/shared_library.h"

namespace trtwatch::trt {

struct TensorRtLibraryNames {
  std::string nvinfer;      // libnvinfer.so.10: the builder
  std::string onnx_parser;  // libnvonnxparser.so.10: the ONNX parser
  std::string plugins;      // libnvinfer_plugin.so.10: TensorRT's standard plugins
};

// The names TensorRT `major` installs on this platform: sonames on Linux (SDK archive,
// distro packages and pip wheels alike), nvinfer_10.dll and the like on Windows.
inline TensorRtLibraryNames LibraryNamesForMajor(int major) {
  return {TensorRtLibraryName("nvinfer", major), TensorRtLibraryName("nvonnxparser", major),
          TensorRtLibraryName("nvinfer_plugin", major)};
}

// The same names inside `folder` (tests point these at stand-in libraries).
inline TensorRtLibraryNames LibraryNamesIn(const std::string& folder, const TensorRtLibraryNames& names) {
  return {folder + "/" + names.nvinfer, folder + "/" + names.onnx_parser, folder + "/" + names.plugins};
}

}  // namespace trtwatch::trt
