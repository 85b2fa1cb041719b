// A stand-in for libnvidia-ml.so.1 for tests (not NVIDIA code): the NVML calls that
// platform/nvml.cc makes, with their documented C signatures, answering for the made-up
// machine of fake_gpus.h (two GPUs, or TRTWATCH_FAKE_GPUS's), listed in PCI order as
// NVML numbers GPUs; a lost GPU is not listed. Built as a loadable module; tests load it by path.
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "fake_nvml/fake_gpus.h"

extern "C" struct nvmlDevice_st;

namespace {
using fake_gpus::FakeGpu;
// NVML is thread-safe, and trtwatch calls it from several threads (builds computing
// their keys at once): init and shutdown count under a lock, and the list is read anew
// only by the first init, so a handle stays valid between its caller's init and shutdown.
std::mutex g_mu;
int g_initialised = 0;        // GUARDED_BY(g_mu)
std::vector<FakeGpu> g_gpus;  // GUARDED_BY(g_mu) while rebuilt; PCI order, without the lost ones

int CopyText(const std::string& text, char* out, unsigned length) {
  if (text.size() + 1 > length) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::memcpy(out, text.c_str(), text.size() + 1);
  return 0;
}
const FakeGpu& Of(const ::nvmlDevice_st* device) { return *reinterpret_cast<const FakeGpu*>(device); }
}  // namespace

extern "C" {
struct FakeMemory {
  unsigned long long total, free, used;
};
struct FakePciInfo {  // nvmlPciInfo_t
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

__attribute__((visibility("default"))) int nvmlInit_v2() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_initialised++ == 0) {
    const std::vector<FakeGpu> all = fake_gpus::Load();
    g_gpus.clear();
    for (int i : fake_gpus::PciOrder(all)) {
      if (!all[static_cast<size_t>(i)].lost) g_gpus.push_back(all[static_cast<size_t>(i)]);
    }
  }
  return 0;
}
__attribute__((visibility("default"))) int nvmlShutdown() {
  std::lock_guard<std::mutex> lock(g_mu);
  --g_initialised;
  return 0;
}
__attribute__((visibility("default"))) const char* nvmlErrorString(int) { return "fake NVML error"; }
__attribute__((visibility("default"))) int nvmlSystemGetDriverVersion(char* version, unsigned length) {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_initialised > 0 ? CopyText("999.12", version, length) : 1;
}
__attribute__((visibility("default"))) int nvmlSystemGetCudaDriverVersion_v2(int* version) {
  *version = 12080;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* count) {
  std::lock_guard<std::mutex> lock(g_mu);
  *count = static_cast<unsigned>(g_gpus.size());
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_st** device) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (index >= g_gpus.size()) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = reinterpret_cast<nvmlDevice_st*>(&g_gpus[index]);
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetName(nvmlDevice_st* device, char* name, unsigned length) {
  return CopyText(Of(device).name, name, length);
}
__attribute__((visibility("default"))) int nvmlDeviceGetUUID(nvmlDevice_st* device, char* uuid, unsigned length) {
  return CopyText(Of(device).uuid, uuid, length);
}
__attribute__((visibility("default"))) int nvmlDeviceGetCudaComputeCapability(nvmlDevice_st* device, int* major,
                                                                              int* minor) {
  *major = Of(device).cc_major;
  *minor = Of(device).cc_minor;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(nvmlDevice_st* device, FakeMemory* memory) {
  memory->total = Of(device).memory;
  memory->free = memory->total / 2;
  memory->used = memory->total - memory->free;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetPciInfo_v3(nvmlDevice_st* device, FakePciInfo* pci) {
  std::memset(pci, 0, sizeof *pci);
  return CopyText(fake_gpus::NvmlBusId(Of(device).pci_bus_id), pci->busId, sizeof pci->busId);
}
}
