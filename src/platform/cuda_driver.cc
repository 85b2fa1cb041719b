#include "platform/cuda_driver.h"

#include <cstdio>
#include <cstdlib>

namespace trtwatch {

namespace {

// The CUDA driver API's C declarations, as its documentation gives them. Only what
// trtwatch calls.
using CUresult = int;  // an enum; 0 is CUDA_SUCCESS
using CUdevice = int;
using CUcontext = void*;
constexpr CUresult kCudaSuccess = 0;
constexpr int kAttributeCcMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttributeCcMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr int kCuNameLength = 256;
constexpr int kBusIdLength = 32;       // at least 13 ("0000:00:00.0")

using CuInitFn = CUresult (*)(unsigned);
using CuErrorStringFn = CUresult (*)(CUresult, const char**);
using CuDriverVersionFn = CUresult (*)(int*);
using CuCountFn = CUresult (*)(int*);
using DeviceGetFn = CUresult (*)(CUdevice*, int);
using TextFn = CUresult (*)(char*, int, CUdevice);  // cuDeviceGetName, cuDeviceGetPCIBusId
using TotalMemFn = CUresult (*)(size_t*, CUdevice);
using AttributeFn = CUresult (*)(int*, int, CUdevice);
using RetainFn = CUresult (*)(CUcontext*, CUdevice);
using ReleaseFn = CUresult (*)(CUdevice);
using GetCurrentFn = CUresult (*)(CUcontext*);
using SetCurrentFn = CUresult (*)(CUcontext);

std::string Describe(const SharedLibrary& driver, CUresult rc) {
  const char* text = nullptr;
  if (auto fn = driver.Function<CuErrorStringFn>("cuGetErrorString"); fn != nullptr) fn(rc, &text);
  return text != nullptr ? std::string(text) : "CUDA error " + std::to_string(rc);
}

std::string VisibleDevicesNote() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible != nullptr ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : "";
}

std::string NoSuchDevice(int ordinal, int count) {
  return "CUDA has no device " + std::to_string(ordinal) + ": it sees " +
         (count == 0 ? std::string("none") : std::to_string(count) + ", numbered 0-" + std::to_string(count - 1)) +
         VisibleDevicesNote() + "; `trtwatch doctor` lists them";
}

// The driver loaded and initialised, or null with the reason.
std::unique_ptr<SharedLibrary> OpenDriver(const std::string& library, std::string* error) {
  std::string why;
  std::unique_ptr<SharedLibrary> driver = SharedLibrary::Open(library, &why);
  if (!driver) {
    *error = "the CUDA driver (" + library + ") could not be loaded: " + why + " (is the NVIDIA driver installed?)";
    return nullptr;
  }
  auto init = driver->Function<CuInitFn>("cuInit");
  if (init == nullptr) {
    *error = driver->Path() + " does not export cuInit: not a usable CUDA driver";
    return nullptr;
  }
  if (const CUresult rc = init(0); rc != kCudaSuccess) {
    *error = "the CUDA driver could not initialise: " + Describe(*driver, rc) + VisibleDevicesNote();
    return nullptr;
  }
  return driver;
}

// How many devices CUDA sees, or -1 with the reason.
int CountDevices(const SharedLibrary& driver, std::string* error) {
  auto count_fn = driver.Function<CuCountFn>("cuDeviceGetCount");
  int count = 0;
  if (count_fn == nullptr) {
    *error = "the CUDA driver lacks cuDeviceGetCount";
    return -1;
  }
  if (const CUresult rc = count_fn(&count); rc != kCudaSuccess) {
    *error = "CUDA could not count its devices: " + Describe(driver, rc);
    return -1;
  }
  return count;
}

}  // namespace

CudaReport QueryCudaDevices(const std::string& library) {
  CudaReport report;
  std::unique_ptr<SharedLibrary> driver = OpenDriver(library, &report.error);
  if (!driver) return report;
  report.loaded = true;
  report.library = driver->Path();
  if (auto fn = driver->Function<CuDriverVersionFn>("cuDriverGetVersion")) fn(&report.driver_version);

  const int count = CountDevices(*driver, &report.error);
  auto get_fn = driver->Function<DeviceGetFn>("cuDeviceGet");
  auto name_fn = driver->Function<TextFn>("cuDeviceGetName");
  auto bus_fn = driver->Function<TextFn>("cuDeviceGetPCIBusId");
  auto memory_fn = driver->Function<TotalMemFn>("cuDeviceTotalMem_v2");
  auto attribute_fn = driver->Function<AttributeFn>("cuDeviceGetAttribute");
  if (count > 0 && get_fn == nullptr) {
    report.error = "the CUDA driver lacks cuDeviceGet: devices not listed";
    return report;
  }
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice handle = 0;
    if (const CUresult rc = get_fn(&handle, ordinal); rc != kCudaSuccess) {
      report.error = "CUDA could not open device " + std::to_string(ordinal) + ": " + Describe(*driver, rc);
      continue;
    }
    CudaDevice device;
    device.ordinal = ordinal;
    char text[kCuNameLength] = {};
    if (name_fn != nullptr && name_fn(text, kCuNameLength, handle) == kCudaSuccess) device.name = text;
    char bus[kBusIdLength] = {};
    if (bus_fn != nullptr && bus_fn(bus, kBusIdLength, handle) == kCudaSuccess) device.pci_bus_id = bus;
    size_t memory = 0;
    if (memory_fn != nullptr && memory_fn(&memory, handle) == kCudaSuccess) device.memory_total_bytes = memory;
    if (attribute_fn != nullptr) {
      attribute_fn(&device.cc_major, kAttributeCcMajor, handle);
      attribute_fn(&device.cc_minor, kAttributeCcMinor, handle);
    }
    report.devices.push_back(std::move(device));
  }
  return report;
}

std::string CudaDeviceProblem(const CudaReport& report, int ordinal) {
  if (!report.loaded) return report.error;
  if (ordinal < 0 || ordinal >= static_cast<int>(report.devices.size())) {
    return NoSuchDevice(ordinal, static_cast<int>(report.devices.size()));
  }
  return "";
}

std::unique_ptr<CudaDeviceSelection> CudaDeviceSelection::Select(int ordinal, std::string* error,
                                                                 const std::string& library) {
  std::unique_ptr<SharedLibrary> driver = OpenDriver(library, error);
  if (!driver) return nullptr;
  const int count = CountDevices(*driver, error);
  if (count < 0) return nullptr;
  if (ordinal < 0 || ordinal >= count) {
    *error = NoSuchDevice(ordinal, count);
    return nullptr;
  }
  auto get_fn = driver->Function<DeviceGetFn>("cuDeviceGet");
  auto retain_fn = driver->Function<RetainFn>("cuDevicePrimaryCtxRetain");
  auto get_current_fn = driver->Function<GetCurrentFn>("cuCtxGetCurrent");
  auto set_current_fn = driver->Function<SetCurrentFn>("cuCtxSetCurrent");
  auto release_fn = driver->Function<ReleaseFn>("cuDevicePrimaryCtxRelease_v2");
  if (get_fn == nullptr || retain_fn == nullptr || get_current_fn == nullptr || set_current_fn == nullptr ||
      release_fn == nullptr) {
    *error = "the CUDA driver " + driver->Path() + " lacks the primary-context calls (CUDA 11 or newer needed)";
    return nullptr;
  }
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUcontext previous = nullptr;
  CUresult rc = get_fn(&device, ordinal);
  if (rc == kCudaSuccess) rc = get_current_fn(&previous);
  if (rc == kCudaSuccess) rc = retain_fn(&context, device);
  if (rc != kCudaSuccess) {
    *error = "CUDA could not open device " + std::to_string(ordinal) + ": " + Describe(*driver, rc);
    return nullptr;
  }
  if (rc = set_current_fn(context); rc != kCudaSuccess) {
    release_fn(device);
    *error = "CUDA could not make device " + std::to_string(ordinal) + " current: " + Describe(*driver, rc);
    return nullptr;
  }
  return std::unique_ptr<CudaDeviceSelection>(new CudaDeviceSelection(std::move(driver), device, previous));
}

CudaDeviceSelection::~CudaDeviceSelection() {
  driver_->Function<SetCurrentFn>("cuCtxSetCurrent")(previous_);
  driver_->Function<ReleaseFn>("cuDevicePrimaryCtxRelease_v2")(device_);
}

bool SamePciBusId(const std::string& a, const std::string& b) {
  unsigned domain[2], bus[2], device[2], function[2];
  const std::string* ids[2] = {&a, &b};
  for (int i = 0; i < 2; ++i) {
    if (std::sscanf(ids[i]->c_str(), "%x:%x:%x.%x", &domain[i], &bus[i], &device[i], &function[i]) != 4) return false;
  }
  return domain[0] == domain[1] && bus[0] == bus[1] && device[0] == device[1] && function[0] == function[1];
}

}  // namespace trtwatch
