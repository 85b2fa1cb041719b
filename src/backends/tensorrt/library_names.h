// The file names of TensorRT's shared libraries for one major version, as the
// loader finds them (sonames). No TensorRT header: doctor and the driver share it.
#pragma once

#include <string>

namespace trtwatch::trt {

struct TensorRtLibraryNames {
  std::string nvinfer;      // libnvinfer.so.10: the builder
  std::string onnx_parser;  // libnvonnxparser.so.10: the ONNX parser
  std::string plugins;      // libnvinfer_plugin.so.10: TensorRT's standard plugins
};

// The sonames TensorRT `major` installs on Linux (SDK archive, distro packages and
// pip wheels alike).
inline TensorRtLibraryNames LibraryNamesForMajor(int major) {
  const std::string suffix = ".so." + std::to_string(major);
  return {"libnvinfer" + suffix, "libnvonnxparser" + suffix, "libnvinfer_plugin" + suffix};
}

// The same names inside `folder` (tests point these at stand-in libraries).
inline TensorRtLibraryNames LibraryNamesIn(const std::string& folder, const TensorRtLibraryNames& names) {
  return {folder + "/" + names.nvinfer, folder + "/" + names.onnx_parser, folder + "/" + names.plugins};
}

}  // namespace trtwatch::trt
