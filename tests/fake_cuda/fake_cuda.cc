// A stand-in for the CUDA driver (libcuda.so.1) for tests (not NVIDIA code): the calls
// that platform/cuda_driver.cc makes, with their documented C signatures. By default the
// machine it describes has the two GPUs of tests/fake_nvml, which NVML lists in PCI
// order (A, then H) and CUDA numbers fastest first (H, then A). TRTWATCH_FAKE_GPUS names
// a file describing another machine (tests/fake_nvml/fake_gpus.h: 8 GPUs of two types,
// a GPU that is lost). It applies CUDA_DEVICE_ORDER=PCI_BUS_ID and CUDA_VISIBLE_DEVICES as
// the driver documents: a comma-separated list of CUDA's device numbers or GPU UUIDs
// ("GPU-…", a unique prefix is enough), ending at the first invalid entry. Both are read
// at every cuInit, not only the first, so that one test process can try several. Built
// as a loadable module; tests load it by path and ask it what was made current.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "fake_nvml/fake_gpus.h"

namespace {
using fake_gpus::FakeGpu;

constexpr int kInvalidDevice = 101;       // CUDA_ERROR_INVALID_DEVICE
constexpr int kNotInitialized = 3;        // CUDA_ERROR_NOT_INITIALIZED
constexpr int kDevicesUnavailable = 46;   // CUDA_ERROR_DEVICES_UNAVAILABLE: what a lost GPU answers here

std::mutex g_mu;
std::vector<FakeGpu> g_gpus = fake_gpus::Load();  // GUARDED_BY(g_mu): CUDA's default order
std::vector<int> g_visible;  // GUARDED_BY(g_mu): indexes into g_gpus after CUDA_VISIBLE_DEVICES
bool g_initialised = false;  // GUARDED_BY(g_mu)
// Atomic: read by the tests from any thread. The CUdevice (index into g_gpus) whose
// primary context is retained, or -1; a second retain while one is held is counted.
std::atomic<int> g_retained{-1};
std::atomic<int> g_retain_count{0};
// initial-exec: in the static TLS block, which stays mapped after dlclose (LeakSanitizer
// reads every thread's TLS at exit; a dynamic block freed with the module faults it).
__attribute__((tls_model("initial-exec"))) thread_local int t_current = -1;  // the device current on this thread

// The device `device` (a CUdevice), copied; false when there is none.
bool Find(int device, FakeGpu* out) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (device < 0 || device >= static_cast<int>(g_gpus.size())) return false;
  *out = g_gpus[static_cast<size_t>(device)];
  return true;
}
int CopyText(const std::string& text, char* out, int length) {
  if (static_cast<int>(text.size()) + 1 > length) return 1;  // CUDA_ERROR_INVALID_VALUE
  std::memcpy(out, text.c_str(), text.size() + 1);
  return 0;
}
// A CUDA_VISIBLE_DEVICES entry: a device number in the order CUDA enumerates, or a UUID (prefix).
int EntryIndex(const std::string& item, const std::vector<int>& order) {
  if (item.rfind("GPU-", 0) == 0) {
    int found = -1;
    for (int i : order) {
      if (g_gpus[static_cast<size_t>(i)].uuid.rfind(item, 0) != 0) continue;
      if (found >= 0) return -1;  // ambiguous
      found = i;
    }
    return found;
  }
  char* end = nullptr;
  const long n = std::strtol(item.c_str(), &end, 10);
  if (item.empty() || *end != '\0' || n < 0 || n >= static_cast<long>(order.size())) return -1;
  return order[static_cast<size_t>(n)];
}
}  // namespace

extern "C" {
#define FAKE_EXPORT __attribute__((visibility("default")))
using CUcontext = void*;

FAKE_EXPORT int cuInit(unsigned) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_initialised = true;
  g_gpus = fake_gpus::Load();
  const char* order_env = std::getenv("CUDA_DEVICE_ORDER");
  const std::vector<int> order = order_env != nullptr && std::strcmp(order_env, "PCI_BUS_ID") == 0
                                     ? fake_gpus::PciOrder(g_gpus)
                                     : fake_gpus::ListOrder(g_gpus);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) {
    g_visible = order;
    return 0;
  }
  g_visible.clear();
  std::string list = visible;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const int index = EntryIndex(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start), order);
    if (index < 0) break;
    g_visible.push_back(index);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return 0;
}
FAKE_EXPORT int cuGetErrorString(int rc, const char** text) {
  *text = rc == kInvalidDevice ? "invalid device ordinal"
          : rc == kDevicesUnavailable ? "all CUDA-capable devices are busy or unavailable (the fake GPU is lost)"
                                      : "fake CUDA error";
  return 0;
}
FAKE_EXPORT int cuDriverGetVersion(int* version) {
  *version = 12080;
  return 0;
}
FAKE_EXPORT int cuDeviceGetCount(int* count) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_initialised) return kNotInitialized;
  *count = static_cast<int>(g_visible.size());
  return 0;
}
FAKE_EXPORT int cuDeviceGet(int* device, int ordinal) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (ordinal < 0 || ordinal >= static_cast<int>(g_visible.size())) return kInvalidDevice;
  const int index = g_visible[static_cast<size_t>(ordinal)];
  if (g_gpus[static_cast<size_t>(index)].lost) return kDevicesUnavailable;
  *device = index;
  return 0;
}
FAKE_EXPORT int cuDeviceGetName(char* name, int length, int device) {
  FakeGpu d;
  return Find(device, &d) ? CopyText(d.name, name, length) : kInvalidDevice;
}
FAKE_EXPORT int cuDeviceGetPCIBusId(char* bus_id, int length, int device) {
  FakeGpu d;
  return Find(device, &d) ? CopyText(d.pci_bus_id, bus_id, length) : kInvalidDevice;
}
FAKE_EXPORT int cuDeviceTotalMem_v2(size_t* bytes, int device) {
  FakeGpu d;
  if (!Find(device, &d)) return kInvalidDevice;
  *bytes = d.memory;
  return 0;
}
FAKE_EXPORT int cuDeviceGetAttribute(int* value, int attribute, int device) {
  FakeGpu d;
  if (!Find(device, &d)) return kInvalidDevice;
  if (attribute == 75) *value = d.cc_major;
  else if (attribute == 76) *value = d.cc_minor;
  else return 1;
  return 0;
}
// A context is its device's number plus one (never null).
FAKE_EXPORT int cuDevicePrimaryCtxRetain(CUcontext* context, int device) {
  FakeGpu d;
  if (!Find(device, &d)) return kInvalidDevice;
  g_retained = device;
  ++g_retain_count;
  *context = reinterpret_cast<CUcontext>(static_cast<intptr_t>(device) + 1);
  return 0;
}
FAKE_EXPORT int cuDevicePrimaryCtxRelease_v2(int device) {
  FakeGpu d;
  if (!Find(device, &d)) return kInvalidDevice;
  if (--g_retain_count == 0) g_retained = -1;
  return 0;
}
FAKE_EXPORT int cuCtxGetCurrent(CUcontext* context) {
  *context = t_current < 0 ? nullptr : reinterpret_cast<CUcontext>(static_cast<intptr_t>(t_current) + 1);
  return 0;
}
FAKE_EXPORT int cuCtxSetCurrent(CUcontext context) {
  t_current = context == nullptr ? -1 : static_cast<int>(reinterpret_cast<intptr_t>(context) - 1);
  return 0;
}

// For the tests: the device (index in CUDA's default order) whose primary context is
// retained now, or -1; and the device current on the calling thread, or -1.
FAKE_EXPORT int fake_cuda_retained_device() { return g_retained.load(); }
FAKE_EXPORT int fake_cuda_current_device() { return t_current; }
}
