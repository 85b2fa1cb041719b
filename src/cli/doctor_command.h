// `trtwatch doctor`: what this machine and this trtwatch can do — the NVIDIA driver
// and GPUs (numbered as CUDA and --device number them, matched to NVML), TensorRT at compile time and at run time, the backends —
// as text or, with --json, as one JSON object on stdout.
//
// Gathering touches the system (dlopen); formatting is pure and tested on its own.
// Single-threaded.
#pragma once

#include <string>
#include <vector>

#include "backends/tensorrt/factory.h"
#include "platform/cuda_driver.h"
#include "platform/nvml.h"

namespace trtwatch {

struct DoctorOptions {
  bool json = false;
};

struct TensorRtRuntime {
  bool found = false;
  std::string library;  // the file name that loaded, e.g. libnvinfer.so.10
  std::string path;     // where the loader found it
  std::string version;  // from getInferLibVersion()
  std::string onnx_parser_path;
  std::string plugins_path;        // libnvinfer_plugin, TensorRT's standard plugins
  std::vector<std::string> tried;  // names tried when not found
  std::string error;               // the loader's last message
};

// Compile-time vs run-time TensorRT: kMismatch when the major versions differ (the
// backend refuses to build), kNewerMinor/kOlderMinor when only minor or patch differ.
enum class VersionAgreement { kNotApplicable, kSame, kNewerMinor, kOlderMinor, kMismatch };
VersionAgreement CompareTensorRtVersions(const std::string& headers, const std::string& runtime);

struct DoctorReport {
  std::string version;
  std::string compiler;
  std::string build_type;
  std::string sanitizer;
  trt::CompiledTensorRt compiled;
  CudaReport cuda;
  NvmlReport nvml;
  TensorRtRuntime runtime;
};

DoctorReport GatherDoctorReport();
std::string FormatDoctorText(const DoctorReport& report);
std::string FormatDoctorJson(const DoctorReport& report);  // one object, pretty-printed

// Returns the exit code: 0 (doctor reports; a missing GPU is not its failure).
int RunDoctorCommand(const DoctorOptions& options);

}  // namespace trtwatch
