#include "cli/doctor_command.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "backends/tensorrt/build_options.h"
#include "platform/shared_library.h"

#ifndef TRTWATCH_VERSION
#define TRTWATCH_VERSION "0.0.0"
#endif
#ifndef TRTWATCH_BUILD_TYPE
#define TRTWATCH_BUILD_TYPE ""
#endif
#ifndef TRTWATCH_SANITIZE_NAME
#define TRTWATCH_SANITIZE_NAME ""
#endif

namespace trtwatch {

namespace {

std::string Compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("g++ ") + __VERSION__;
#else
  return "unknown";
#endif
}

TensorRtRuntime ProbeTensorRt() {
  TensorRtRuntime runtime;
  // Newest first; the unversioned name last (it is a development symlink).
  for (const int major : {11, 10, 9, 0}) {
    const std::string name = TensorRtLibraryName("nvinfer", major);
    runtime.tried.push_back(name);
    std::string error;
    std::unique_ptr<SharedLibrary> lib = SharedLibrary::Open(name, &error, /*lazy=*/true);
    if (!lib) {
      runtime.error = error;
      continue;
    }
    runtime.found = true;
    runtime.library = name;
    runtime.path = lib->Path();
    runtime.error.clear();
    using VersionFn = int32_t (*)();
    if (auto version = lib->Function<VersionFn>("getInferLibVersion")) {
      runtime.version = trt::FormatTensorRtVersion(version());
    } else {
      runtime.error = "no getInferLibVersion in " + runtime.path;
    }
    if (auto parser = SharedLibrary::Open(TensorRtLibraryName("nvonnxparser", major), &error, /*lazy=*/true)) {
      runtime.onnx_parser_path = parser->Path();
    }
    break;
  }
  return runtime;
}

bool TensorRtReady(const DoctorReport& r) {
  return r.compiled.built && !r.compiled.test_double && r.runtime.found && r.nvml.loaded && !r.nvml.gpus.empty();
}

std::string TensorRtBackendNote(const DoctorReport& r) {
  if (!r.compiled.built) {
    return "not built into this trtwatch (TensorRT was not found when it was configured): install TensorRT 9, 10 "
           "or 11 and rebuild with -DTensorRT_ROOT=/path/to/TensorRT (docs/tensorrt.md)";
  }
  if (r.compiled.test_double) return "built against the tests' TensorRT double: for tests only";
  if (!r.runtime.found) return "built, but libnvinfer was not found at run time: add TensorRT's lib/ to LD_LIBRARY_PATH";
  if (!r.nvml.loaded || r.nvml.gpus.empty()) return "built, but no NVIDIA GPU is visible: engine builds need one";
  return "ready";
}

}  // namespace

DoctorReport GatherDoctorReport() {
  DoctorReport report;
  report.version = TRTWATCH_VERSION;
  report.compiler = Compiler();
  report.build_type = TRTWATCH_BUILD_TYPE;
  report.sanitizer = TRTWATCH_SANITIZE_NAME;
  report.compiled = trt::CompiledWith();
  report.nvml = QueryNvml();
  report.runtime = ProbeTensorRt();
  return report;
}

std::string FormatDoctorText(const DoctorReport& r) {
  std::string out;
  auto line = [&](const std::string& text) { out += text + "\n"; };
  line("trtwatch " + r.version + " (" + (r.build_type.empty() ? "default" : r.build_type) + " build, " + r.compiler +
       (r.sanitizer.empty() ? "" : ", sanitizer: " + r.sanitizer) + ")");
  if (r.compiled.built) {
    line("  compiled with TensorRT " + r.compiled.header_version + " headers" +
         (r.compiled.root.empty() ? "" : " from " + r.compiled.root) +
         (r.compiled.test_double ? " (the tests' double)" : ""));
  } else {
    line("  compiled without TensorRT");
  }
  line("");
  if (r.nvml.loaded) {
    line("NVIDIA driver: " + (r.nvml.driver_version.empty() ? std::string("version unknown") : r.nvml.driver_version) +
         (r.nvml.cuda_driver_version > 0 ? " (CUDA " + FormatCudaVersion(r.nvml.cuda_driver_version) + ")" : "") +
         ", NVML " + r.nvml.library);
  } else {
    line("NVIDIA driver: not found (" + r.nvml.error + ")");
  }
  if (r.nvml.gpus.empty()) {
    line("GPUs: none visible" + std::string(r.nvml.loaded ? "" : " (engine builds need an NVIDIA GPU and its driver)"));
  } else {
    line("GPUs: " + std::to_string(r.nvml.gpus.size()));
    for (const GpuInfo& gpu : r.nvml.gpus) {
      line("  " + std::to_string(gpu.index) + ": " + gpu.name + ", compute capability " + std::to_string(gpu.cc_major) +
           "." + std::to_string(gpu.cc_minor) + ", " + FormatGpuMemory(gpu.memory_total_bytes));
    }
  }
  if (r.nvml.loaded && !r.nvml.error.empty()) line("  note: " + r.nvml.error);
  line("");
  if (r.runtime.found) {
    line("TensorRT at run time: " + (r.runtime.version.empty() ? std::string("version unknown") : r.runtime.version) +
         ", " + r.runtime.path);
    line("  ONNX parser: " + (r.runtime.onnx_parser_path.empty() ? std::string("not found") : r.runtime.onnx_parser_path));
  } else {
    std::string tried;
    for (const std::string& name : r.runtime.tried) tried += (tried.empty() ? "" : ", ") + name;
    line("TensorRT at run time: not found (tried " + tried + ")");
  }
  line("");
  line("Backends:");
  line("  simulated  ready (no TensorRT or GPU needed: trtwatch build --simulate small-cnn)");
  line("  tensorrt   " + TensorRtBackendNote(r));
  return out;
}

std::string FormatDoctorJson(const DoctorReport& r) {
  using json = nlohmann::ordered_json;  // fields in the order a reader wants them
  json gpus = json::array();
  for (const GpuInfo& gpu : r.nvml.gpus) {
    gpus.push_back({{"index", gpu.index},
                    {"name", gpu.name},
                    {"uuid", gpu.uuid},
                    {"compute_capability", std::to_string(gpu.cc_major) + "." + std::to_string(gpu.cc_minor)},
                    {"memory_bytes", gpu.memory_total_bytes}});
  }
  json doc = {
      {"trtwatch",
       {{"version", r.version},
        {"compiler", r.compiler},
        {"build_type", r.build_type},
        {"sanitizer", r.sanitizer},
        {"tensorrt_headers", r.compiled.built ? json(r.compiled.header_version) : json(nullptr)},
        {"tensorrt_root", r.compiled.root.empty() ? json(nullptr) : json(r.compiled.root)},
        {"tensorrt_test_double", r.compiled.test_double}}},
      {"driver",
       {{"nvml", r.nvml.loaded},
        {"nvml_library", r.nvml.library.empty() ? json(nullptr) : json(r.nvml.library)},
        {"version", r.nvml.driver_version.empty() ? json(nullptr) : json(r.nvml.driver_version)},
        {"cuda_version",
         r.nvml.cuda_driver_version > 0 ? json(FormatCudaVersion(r.nvml.cuda_driver_version)) : json(nullptr)},
        {"error", r.nvml.error.empty() ? json(nullptr) : json(r.nvml.error)}}},
      {"gpus", gpus},
      {"tensorrt_runtime",
       {{"found", r.runtime.found},
        {"library", r.runtime.found ? json(r.runtime.library) : json(nullptr)},
        {"path", r.runtime.found ? json(r.runtime.path) : json(nullptr)},
        {"version", r.runtime.version.empty() ? json(nullptr) : json(r.runtime.version)},
        {"onnx_parser", r.runtime.onnx_parser_path.empty() ? json(nullptr) : json(r.runtime.onnx_parser_path)},
        {"tried", r.runtime.tried},
        {"error", r.runtime.error.empty() ? json(nullptr) : json(r.runtime.error)}}},
      {"backends",
       json::array({{{"name", "simulated"}, {"built", true}, {"ready", true}, {"note", "ready"}},
                    {{"name", "tensorrt"},
                     {"built", r.compiled.built},
                     {"ready", TensorRtReady(r)},
                     {"note", TensorRtBackendNote(r)}}})}};
  return doc.dump(2) + "\n";
}

int RunDoctorCommand(const DoctorOptions& options) {
  const DoctorReport report = GatherDoctorReport();
  const std::string text = options.json ? FormatDoctorJson(report) : FormatDoctorText(report);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace trtwatch
