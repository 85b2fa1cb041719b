#include "cli/doctor_command.h"

#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>

#include "backends/tensorrt/build_options.h"
#include "backends/tensorrt/library_names.h"
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

TensorRtRuntime ProbeTensorRt(const trt::CompiledTensorRt& compiled) {
  TensorRtRuntime runtime;
  // A TensorRT-enabled trtwatch loads the sonames of the major version it was built
  // for, and nothing else; without TensorRT, say what is installed, newest first.
  std::vector<int> majors = {11, 10, 9};
  if (compiled.built) majors = {compiled.major};
  for (int major : majors) {
    const trt::TensorRtLibraryNames names = trt::LibraryNamesForMajor(major);
    const std::string& name = names.nvinfer;
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
    if (auto parser = SharedLibrary::Open(names.onnx_parser, &error, /*lazy=*/true)) {
      runtime.onnx_parser_path = parser->Path();
    }
    if (auto plugins = SharedLibrary::Open(names.plugins, &error, /*lazy=*/true)) {
      runtime.plugins_path = plugins->Path();
    }
    break;
  }
  return runtime;
}

// One GPU as both numberings see it: CUDA's (what --device takes; absent when
// CUDA_VISIBLE_DEVICES hides it or the CUDA driver is missing) and NVML's (PCI order).
struct DoctorGpu {
  std::optional<int> cuda_device;
  std::optional<unsigned> nvml_index;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
  int cc_major = 0;
  int cc_minor = 0;
  uint64_t memory_total_bytes = 0;
};

std::vector<DoctorGpu> DoctorGpus(const DoctorReport& r) {
  std::vector<DoctorGpu> gpus;
  std::vector<bool> matched(r.nvml.gpus.size(), false);
  for (const CudaDevice& device : r.cuda.devices) {
    DoctorGpu gpu{device.ordinal, std::nullopt, device.name, "", device.pci_bus_id,
                  device.cc_major, device.cc_minor, device.memory_total_bytes};
    if (const GpuInfo* entry = NvmlEntryFor(r.nvml, device)) {
      gpu.nvml_index = entry->index;
      gpu.uuid = entry->uuid;
      // The board's memory as nvidia-smi counts it; CUDA's total leaves out what the driver reserves.
      if (entry->memory_total_bytes > 0) gpu.memory_total_bytes = entry->memory_total_bytes;
      matched[static_cast<size_t>(entry - r.nvml.gpus.data())] = true;
    }
    gpus.push_back(std::move(gpu));
  }
  for (size_t i = 0; i < r.nvml.gpus.size(); ++i) {
    if (matched[i]) continue;
    const GpuInfo& entry = r.nvml.gpus[i];
    gpus.push_back({std::nullopt, entry.index, entry.name, entry.uuid, entry.pci_bus_id, entry.cc_major, entry.cc_minor,
                    entry.memory_total_bytes});
  }
  return gpus;
}

// Whether a build can find a GPU: CUDA sees one (or, without the CUDA driver to ask, NVML does).
bool GpuVisible(const DoctorReport& r) { return r.cuda.loaded ? !r.cuda.devices.empty() : !r.nvml.gpus.empty(); }

VersionAgreement Agreement(const DoctorReport& r) {
  if (!r.compiled.built || !r.runtime.found) return VersionAgreement::kNotApplicable;
  return CompareTensorRtVersions(r.compiled.header_version, r.runtime.version);
}

bool TensorRtReady(const DoctorReport& r) {
  return r.compiled.built && !r.compiled.test_double && r.runtime.found && !r.runtime.onnx_parser_path.empty() &&
         Agreement(r) != VersionAgreement::kMismatch && GpuVisible(r);
}

// One line on how the run-time TensorRT relates to the headers, or "" when they agree.
std::string VersionNote(const DoctorReport& r) {
  const std::string pair = "built with TensorRT " + r.compiled.header_version + " headers, loaded " + r.runtime.version;
  switch (Agreement(r)) {
    case VersionAgreement::kMismatch:
      return "MISMATCH: " + pair + "; rebuild trtwatch against the installed TensorRT (-DTensorRT_ROOT=...) or "
             "install TensorRT " + std::to_string(r.compiled.major);
    case VersionAgreement::kOlderMinor:
      return "older than the headers: " + pair + "; features newer than " + r.runtime.version +
             " may be refused by TensorRT";
    case VersionAgreement::kNewerMinor:
      return "newer than the headers: " + pair + " (fine: same major version)";
    default:
      return "";
  }
}

std::string TensorRtBackendNote(const DoctorReport& r) {
  if (!r.compiled.built) {
    return "not built into this trtwatch (TensorRT was not found when it was configured): install TensorRT 9, 10 "
           "or 11 and rebuild with -DTensorRT_ROOT=/path/to/TensorRT (docs/tensorrt.md)";
  }
  if (r.compiled.test_double) return "built against the tests' TensorRT double: for tests only";
  if (!r.runtime.found) {
    return "built for TensorRT " + std::to_string(r.compiled.major) + ", but " +
           trt::LibraryNamesForMajor(r.compiled.major).nvinfer +
           " was not found at run time: install it, or add TensorRT's lib/ to LD_LIBRARY_PATH";
  }
  if (r.runtime.onnx_parser_path.empty()) {
    return "built, but " + trt::LibraryNamesForMajor(r.compiled.major).onnx_parser +
           " (the ONNX parser) was not found at run time: install it with TensorRT";
  }
  if (Agreement(r) == VersionAgreement::kMismatch) return "not usable: " + VersionNote(r);
  if (!GpuVisible(r)) return "built, but no NVIDIA GPU is visible: engine builds need one";
  return "ready";
}

}  // namespace

VersionAgreement CompareTensorRtVersions(const std::string& headers, const std::string& runtime) {
  auto parse = [](const std::string& text, int out[3]) {
    return std::sscanf(text.c_str(), "%d.%d.%d", &out[0], &out[1], &out[2]) == 3;
  };
  int h[3], r[3];
  if (!parse(headers, h) || !parse(runtime, r)) return VersionAgreement::kMismatch;  // "unknown"
  if (h[0] != r[0]) return VersionAgreement::kMismatch;
  if (h[1] == r[1] && h[2] == r[2]) return VersionAgreement::kSame;
  return (r[1] > h[1] || (r[1] == h[1] && r[2] > h[2])) ? VersionAgreement::kNewerMinor : VersionAgreement::kOlderMinor;
}

DoctorReport GatherDoctorReport() {
  DoctorReport report;
  report.version = TRTWATCH_VERSION;
  report.compiler = Compiler();
  report.build_type = TRTWATCH_BUILD_TYPE;
  report.sanitizer = TRTWATCH_SANITIZE_NAME;
  report.compiled = trt::CompiledWith();
  report.cuda = QueryCudaDevices();
  report.nvml = QueryNvml();
  report.runtime = ProbeTensorRt(report.compiled);
  return report;
}

namespace {

// The first lines: this binary, its compiler and the TensorRT it was compiled with.
void AppendBuildLines(const DoctorReport& r, std::string& out) {
  auto line = [&](const std::string& text) { out += text + "\n"; };
  line("trtwatch " + r.version + " (" + (r.build_type.empty() ? "default" : r.build_type) + " build, " + r.compiler +
       (r.sanitizer.empty() ? "" : ", sanitizer: " + r.sanitizer) + ")");
  if (r.compiled.built) {
    line("  compiled with TensorRT " + r.compiled.header_version + " headers" +
         (r.compiled.root.empty() ? "" : " from " + r.compiled.root) + "; loads " +
         trt::LibraryNamesForMajor(r.compiled.major).nvinfer + " at run time" +
         (r.compiled.test_double ? " (the tests' double)" : ""));
  } else {
    line("  compiled without TensorRT");
  }
}

// The NVIDIA and CUDA drivers, or why each was not found.
void AppendDriverLines(const DoctorReport& r, std::string& out) {
  auto line = [&](const std::string& text) { out += text + "\n"; };
  if (r.nvml.loaded) {
    line("NVIDIA driver: " + (r.nvml.driver_version.empty() ? std::string("version unknown") : r.nvml.driver_version) +
         (r.nvml.cuda_driver_version > 0 ? " (CUDA " + FormatCudaVersion(r.nvml.cuda_driver_version) + ")" : "") +
         ", NVML " + r.nvml.library);
  } else {
    line("NVIDIA driver: not found (" + r.nvml.error + ")");
  }
  if (r.cuda.loaded) {
    line("CUDA driver: " + (r.cuda.driver_version > 0 ? FormatCudaVersion(r.cuda.driver_version) : "version unknown") +
         ", " + r.cuda.library);
  } else {
    line("CUDA driver: not found (" + r.cuda.error + ")" +
         (r.nvml.gpus.empty() ? "" : ": GPUs below are numbered as NVML numbers them, which --device may not follow"));
  }
}

// The GPUs, numbered as --device takes them where CUDA is loaded.
void AppendGpuLines(const DoctorReport& r, std::string& out) {
  auto line = [&](const std::string& text) { out += text + "\n"; };
  const std::vector<DoctorGpu> gpus = DoctorGpus(r);
  if (gpus.empty()) {
    line("GPUs: none visible" + std::string(r.nvml.loaded || r.cuda.loaded
                                                ? ""
                                                : " (engine builds need an NVIDIA GPU and its driver)"));
  } else {
    line("GPUs: " + std::to_string(gpus.size()) + (r.cuda.loaded ? " (numbered as --device takes them)" : ""));
    for (const DoctorGpu& gpu : gpus) {
      std::string where;
      if (gpu.nvml_index) where = "NVML " + std::to_string(*gpu.nvml_index);
      if (!gpu.pci_bus_id.empty()) where += (where.empty() ? "PCI " : ", PCI ") + gpu.pci_bus_id;
      const std::string label = gpu.cuda_device ? std::to_string(*gpu.cuda_device)
                                : r.cuda.loaded ? "hidden from CUDA (CUDA_VISIBLE_DEVICES)"
                                                : "NVML " + std::to_string(*gpu.nvml_index);
      line("  " + label + ": " + gpu.name + ", compute capability " + std::to_string(gpu.cc_major) + "." +
           std::to_string(gpu.cc_minor) + ", " + FormatGpuMemory(gpu.memory_total_bytes) +
           (where.empty() || !r.cuda.loaded ? "" : " (" + where + ")"));
    }
  }
  if (r.cuda.loaded && !r.cuda.error.empty()) line("  note: " + r.cuda.error);
  if (r.nvml.loaded && !r.nvml.error.empty()) line("  note: " + r.nvml.error);
}

// The TensorRT libraries found at run time, or the names tried.
void AppendRuntimeLines(const DoctorReport& r, std::string& out) {
  auto line = [&](const std::string& text) { out += text + "\n"; };
  if (r.runtime.found) {
    line("TensorRT at run time: " + (r.runtime.version.empty() ? std::string("version unknown") : r.runtime.version) +
         ", " + r.runtime.path);
    line("  ONNX parser: " + (r.runtime.onnx_parser_path.empty() ? std::string("not found") : r.runtime.onnx_parser_path));
    line("  standard plugins: " +
         (r.runtime.plugins_path.empty() ? std::string("not found (models that use them will not parse)")
                                         : r.runtime.plugins_path));
    if (const std::string note = VersionNote(r); !note.empty()) line("  " + note);
  } else {
    std::string tried;
    for (const std::string& name : r.runtime.tried) tried += (tried.empty() ? "" : ", ") + name;
    line("TensorRT at run time: not found (tried " + tried + ")");
  }
}

}  // namespace

std::string FormatDoctorText(const DoctorReport& r) {
  std::string out;
  AppendBuildLines(r, out);
  out += "\n";
  AppendDriverLines(r, out);
  AppendGpuLines(r, out);
  out += "\n";
  AppendRuntimeLines(r, out);
  out += "\n";
  out += "Backends:\n";
  out += "  simulated  ready (no TensorRT or GPU needed: trtwatch build --simulate small-cnn)\n";
  out += "  tensorrt   " + TensorRtBackendNote(r) + "\n";
  return out;
}

std::string FormatDoctorJson(const DoctorReport& r) {
  using ordered = nlohmann::ordered_json;  // fields in the order a reader wants them
  ordered gpus = ordered::array();
  for (const DoctorGpu& gpu : DoctorGpus(r)) {
    gpus.push_back({{"cuda_device", gpu.cuda_device ? ordered(*gpu.cuda_device) : ordered(nullptr)},
                    {"nvml_index", gpu.nvml_index ? ordered(*gpu.nvml_index) : ordered(nullptr)},
                    {"name", gpu.name},
                    {"uuid", gpu.uuid.empty() ? ordered(nullptr) : ordered(gpu.uuid)},
                    {"pci_bus_id", gpu.pci_bus_id.empty() ? ordered(nullptr) : ordered(gpu.pci_bus_id)},
                    {"compute_capability", std::to_string(gpu.cc_major) + "." + std::to_string(gpu.cc_minor)},
                    {"memory_bytes", gpu.memory_total_bytes}});
  }
  ordered doc = {
      {"trtwatch",
       {{"version", r.version},
        {"compiler", r.compiler},
        {"build_type", r.build_type},
        {"sanitizer", r.sanitizer},
        {"tensorrt_headers", r.compiled.built ? ordered(r.compiled.header_version) : ordered(nullptr)},
        {"tensorrt_root", r.compiled.root.empty() ? ordered(nullptr) : ordered(r.compiled.root)},
        {"tensorrt_test_double", r.compiled.test_double}}},
      {"driver",
       {{"nvml", r.nvml.loaded},
        {"nvml_library", r.nvml.library.empty() ? ordered(nullptr) : ordered(r.nvml.library)},
        {"version", r.nvml.driver_version.empty() ? ordered(nullptr) : ordered(r.nvml.driver_version)},
        {"cuda_version",
         r.nvml.cuda_driver_version > 0 ? ordered(FormatCudaVersion(r.nvml.cuda_driver_version)) : ordered(nullptr)},
        {"error", r.nvml.error.empty() ? ordered(nullptr) : ordered(r.nvml.error)},
        {"cuda", r.cuda.loaded},
        {"cuda_library", r.cuda.library.empty() ? ordered(nullptr) : ordered(r.cuda.library)},
        {"cuda_error", r.cuda.error.empty() ? ordered(nullptr) : ordered(r.cuda.error)}}},
      {"gpus", gpus},
      {"tensorrt_runtime",
       {{"found", r.runtime.found},
        {"library", r.runtime.found ? ordered(r.runtime.library) : ordered(nullptr)},
        {"path", r.runtime.found ? ordered(r.runtime.path) : ordered(nullptr)},
        {"version", r.runtime.version.empty() ? ordered(nullptr) : ordered(r.runtime.version)},
        {"onnx_parser", r.runtime.onnx_parser_path.empty() ? ordered(nullptr) : ordered(r.runtime.onnx_parser_path)},
        {"plugins", r.runtime.plugins_path.empty() ? ordered(nullptr) : ordered(r.runtime.plugins_path)},
        {"matches_headers", Agreement(r) == VersionAgreement::kNotApplicable
                                ? ordered(nullptr)
                                : ordered(Agreement(r) != VersionAgreement::kMismatch)},
        {"version_note", VersionNote(r).empty() ? ordered(nullptr) : ordered(VersionNote(r))},
        {"tried", r.runtime.tried},
        {"error", r.runtime.error.empty() ? ordered(nullptr) : ordered(r.runtime.error)}}},
      {"backends",
       ordered::array({{{"name", "simulated"}, {"built", true}, {"ready", true}, {"note", "ready"}},
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
