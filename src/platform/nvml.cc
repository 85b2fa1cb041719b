#include "platform/nvml.h"

#include <cstdio>

#include "platform/shared_library.h"

namespace trtwatch {

namespace {

// NVML's C API, as its documentation declares it. Only what trtwatch reads.
using nvmlReturn_t = int;  // an enum; 0 is NVML_SUCCESS
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;
  unsigned pciSubSystemId;
  char busId[32];
};
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned kNameLength = 96;      // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kVersionLength = 80;   // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
constexpr unsigned kUuidLength = 96;      // NVML_DEVICE_UUID_V2_BUFFER_SIZE

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using DriverVersionFn = nvmlReturn_t (*)(char*, unsigned);
using CudaDriverVersionFn = nvmlReturn_t (*)(int*);
using CountFn = nvmlReturn_t (*)(unsigned*);
using HandleFn = nvmlReturn_t (*)(unsigned, nvmlDevice_t*);
using NameFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned);
using CapabilityFn = nvmlReturn_t (*)(nvmlDevice_t, int*, int*);
using MemoryFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using PciInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);

// NVML's text for rc, or its number where the library has no nvmlErrorString.
std::string DescribeNvmlError(ErrorStringFn error_string, nvmlReturn_t rc) {
  const char* text = error_string != nullptr ? error_string(rc) : nullptr;
  return text != nullptr ? std::string(text) : "NVML error " + std::to_string(rc);
}

// The driver's version and the CUDA version it supports, where NVML tells them.
void ReadDriverVersions(SharedLibrary& lib, NvmlReport& report) {
  if (auto fn = lib.Function<DriverVersionFn>("nvmlSystemGetDriverVersion")) {
    char version[kVersionLength] = {};
    if (fn(version, kVersionLength) == kNvmlSuccess) report.driver_version = version;
  }
  auto cuda_version = lib.Function<CudaDriverVersionFn>("nvmlSystemGetCudaDriverVersion_v2");
  if (cuda_version == nullptr) cuda_version = lib.Function<CudaDriverVersionFn>("nvmlSystemGetCudaDriverVersion");
  if (cuda_version != nullptr) {
    int version = 0;
    if (cuda_version(&version) == kNvmlSuccess) report.cuda_driver_version = version;
  }
}

// The per-device queries; one the library lacks is null and leaves its field empty.
struct DeviceQueries {
  NameFn name;
  NameFn uuid;
  CapabilityFn cc;
  MemoryFn memory;
  PciInfoFn pci;
};

GpuInfo ReadGpu(const DeviceQueries& q, nvmlDevice_t device, unsigned index) {
  GpuInfo gpu;
  gpu.index = index;
  char text[kNameLength] = {};
  if (q.name != nullptr && q.name(device, text, kNameLength) == kNvmlSuccess) gpu.name = text;
  char uuid[kUuidLength] = {};
  if (q.uuid != nullptr && q.uuid(device, uuid, kUuidLength) == kNvmlSuccess) gpu.uuid = uuid;
  if (q.cc != nullptr) q.cc(device, &gpu.cc_major, &gpu.cc_minor);
  nvmlMemory_t memory{};
  if (q.memory != nullptr && q.memory(device, &memory) == kNvmlSuccess) gpu.memory_total_bytes = memory.total;
  nvmlPciInfo_t pci{};
  if (q.pci != nullptr && q.pci(device, &pci) == kNvmlSuccess) {
    pci.busId[sizeof pci.busId - 1] = '\0';
    gpu.pci_bus_id = pci.busId;
  }
  return gpu;
}

// Every GPU NVML counts; one it cannot open is left out, its error kept.
void ListGpus(SharedLibrary& lib, ErrorStringFn error_string, NvmlReport& report) {
  auto count_fn = lib.Function<CountFn>("nvmlDeviceGetCount_v2");
  auto handle_fn = lib.Function<HandleFn>("nvmlDeviceGetHandleByIndex_v2");
  const DeviceQueries queries{lib.Function<NameFn>("nvmlDeviceGetName"), lib.Function<NameFn>("nvmlDeviceGetUUID"),
                              lib.Function<CapabilityFn>("nvmlDeviceGetCudaComputeCapability"),
                              lib.Function<MemoryFn>("nvmlDeviceGetMemoryInfo"),
                              lib.Function<PciInfoFn>("nvmlDeviceGetPciInfo_v3")};
  unsigned count = 0;
  if (count_fn == nullptr || handle_fn == nullptr) {
    report.error = "NVML lacks nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2: GPUs not listed";
  } else if (const nvmlReturn_t rc = count_fn(&count); rc != kNvmlSuccess) {
    report.error = "NVML could not count GPUs: " + DescribeNvmlError(error_string, rc);
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (const nvmlReturn_t rc = handle_fn(i, &device); rc != kNvmlSuccess) {
      report.error = "NVML could not open GPU " + std::to_string(i) + ": " + DescribeNvmlError(error_string, rc);
      continue;
    }
    report.gpus.push_back(ReadGpu(queries, device, i));
  }
}

}  // namespace

NvmlReport QueryNvml(const std::string& library) {
  NvmlReport report;
  std::string error;
  std::unique_ptr<SharedLibrary> lib = SharedLibrary::Open(library, &error);
  if (!lib) {
    report.error = "NVML (" + library + ") could not be loaded: " + error;
    return report;
  }
  report.library = lib->Path();
  auto init = lib->Function<InitFn>("nvmlInit_v2");
  auto shutdown = lib->Function<ShutdownFn>("nvmlShutdown");
  auto error_string = lib->Function<ErrorStringFn>("nvmlErrorString");
  if (init == nullptr || shutdown == nullptr) {
    report.error = report.library + " does not export nvmlInit_v2/nvmlShutdown: not a usable NVML";
    return report;
  }
  if (const nvmlReturn_t rc = init(); rc != kNvmlSuccess) {
    report.error = "NVML could not initialise: " + DescribeNvmlError(error_string, rc) +
                   " (is the NVIDIA driver loaded?)";
    return report;
  }
  report.loaded = true;
  ReadDriverVersions(*lib, report);
  ListGpus(*lib, error_string, report);
  shutdown();
  return report;
}

const GpuInfo* NvmlEntryFor(const NvmlReport& report, const CudaDevice& device) {
  for (const GpuInfo& gpu : report.gpus) {
    if (SamePciBusId(gpu.pci_bus_id, device.pci_bus_id)) return &gpu;
  }
  return nullptr;
}

std::string FormatCudaVersion(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string FormatGpuMemory(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace trtwatch
