// A stand-in for the CUDA driver (libcuda.so.1) for tests (not NVIDIA code): the calls
// that platform/cuda_driver.cc makes, with their documented C signatures. The machine
// it describes has the two GPUs of tests/fake_nvml, which NVML lists in PCI order (A,
// then H) and CUDA numbers fastest first (H, then A), and it applies
// CUDA_VISIBLE_DEVICES as the driver documents: a comma-separated list of CUDA's device
// numbers, ending at the first invalid entry (read at every cuInit, not only the
// first, so that one test process can try several). Built as a loadable
// module; tests load it by path and ask it what was made current.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {
struct FakeDevice {
  const char* name;
  const char* pci_bus_id;
  int cc_major;
  int cc_minor;
  size_t memory;
};
// CUDA's default order: fastest first.
const FakeDevice kDevices[] = {
    {"Fake GPU H", "0000:5e:00.0", 9, 0, 150ULL * 1024 * 1024 * 1024},
    {"Fake GPU A", "0000:3b:00.0", 8, 0, 80ULL * 1024 * 1024 * 1024},
};
constexpr int kInvalidDevice = 101;  // CUDA_ERROR_INVALID_DEVICE
constexpr int kNotInitialized = 3;   // CUDA_ERROR_NOT_INITIALIZED

std::mutex g_mu;
std::vector<int> g_visible;  // GUARDED_BY(g_mu): CUDA's device numbers after CUDA_VISIBLE_DEVICES
bool g_initialised = false;  // GUARDED_BY(g_mu)
// Atomic: read by the tests from any thread. The CUdevice (index into kDevices) whose
// primary context is retained, or -1; a second retain while one is held is counted.
std::atomic<int> g_retained{-1};
std::atomic<int> g_retain_count{0};
// initial-exec: in the static TLS block, which stays mapped after dlclose (LeakSanitizer
// reads every thread's TLS at exit; a dynamic block freed with the module faults it).
__attribute__((tls_model("initial-exec"))) thread_local int t_current = -1;  // the device current on this thread

const FakeDevice* Find(int device) {
  return device >= 0 && device < static_cast<int>(sizeof kDevices / sizeof kDevices[0]) ? &kDevices[device] : nullptr;
}
int CopyText(const char* text, char* out, int length) {
  if (static_cast<int>(std::strlen(text)) + 1 > length) return 1;  // CUDA_ERROR_INVALID_VALUE
  std::strcpy(out, text);
  return 0;
}
}  // namespace

extern "C" {
#define FAKE_EXPORT __attribute__((visibility("default")))
using CUcontext = void*;

FAKE_EXPORT int cuInit(unsigned) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_initialised = true;
  g_visible.clear();
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) {
    g_visible = {0, 1};
    return 0;
  }
  std::string list = visible;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || Find(static_cast<int>(n)) == nullptr) break;
    g_visible.push_back(static_cast<int>(n));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return 0;
}
FAKE_EXPORT int cuGetErrorString(int rc, const char** text) {
  *text = rc == kInvalidDevice ? "invalid device ordinal" : "fake CUDA error";
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
  *device = g_visible[static_cast<size_t>(ordinal)];
  return 0;
}
FAKE_EXPORT int cuDeviceGetName(char* name, int length, int device) {
  const FakeDevice* d = Find(device);
  return d != nullptr ? CopyText(d->name, name, length) : kInvalidDevice;
}
FAKE_EXPORT int cuDeviceGetPCIBusId(char* bus_id, int length, int device) {
  const FakeDevice* d = Find(device);
  return d != nullptr ? CopyText(d->pci_bus_id, bus_id, length) : kInvalidDevice;
}
FAKE_EXPORT int cuDeviceTotalMem_v2(size_t* bytes, int device) {
  const FakeDevice* d = Find(device);
  if (d == nullptr) return kInvalidDevice;
  *bytes = d->memory;
  return 0;
}
FAKE_EXPORT int cuDeviceGetAttribute(int* value, int attribute, int device) {
  const FakeDevice* d = Find(device);
  if (d == nullptr) return kInvalidDevice;
  if (attribute == 75) *value = d->cc_major;
  else if (attribute == 76) *value = d->cc_minor;
  else return 1;
  return 0;
}
// A context is the address of its device's entry.
FAKE_EXPORT int cuDevicePrimaryCtxRetain(CUcontext* context, int device) {
  const FakeDevice* d = Find(device);
  if (d == nullptr) return kInvalidDevice;
  g_retained = device;
  ++g_retain_count;
  *context = const_cast<FakeDevice*>(d);
  return 0;
}
FAKE_EXPORT int cuDevicePrimaryCtxRelease_v2(int device) {
  if (Find(device) == nullptr) return kInvalidDevice;
  if (--g_retain_count == 0) g_retained = -1;
  return 0;
}
FAKE_EXPORT int cuCtxGetCurrent(CUcontext* context) {
  *context = t_current < 0 ? nullptr : const_cast<FakeDevice*>(&kDevices[t_current]);
  return 0;
}
FAKE_EXPORT int cuCtxSetCurrent(CUcontext context) {
  t_current = context == nullptr ? -1 : static_cast<int>(static_cast<const FakeDevice*>(context) - kDevices);
  return 0;
}

// For the tests: the device (index in CUDA's default order) whose primary context is
// retained now, or -1; and the device current on the calling thread, or -1.
FAKE_EXPORT int fake_cuda_retained_device() { return g_retained.load(); }
FAKE_EXPORT int fake_cuda_current_device() { return t_current; }
}
