// A stand-in for libnvidia-ml.so.1 for tests (not NVIDIA code): the NVML calls that
// platform/nvml.cc makes, with their documented C signatures, answering for
// two made-up GPUs. Built as a loadable module; tests load it by path.
#include <cstring>

namespace {
struct FakeDevice {
  const char* name;
  const char* uuid;
  const char* pci_bus_id;
  int cc_major;
  int cc_minor;
  unsigned long long memory;
};
// PCI order, as NVML numbers GPUs (tests/fake_cuda numbers the same two fastest first).
const FakeDevice kDevices[] = {
    {"Fake GPU A", "GPU-00000000-0000-0000-0000-000000000002", "00000000:3B:00.0", 8, 0, 80ULL * 1024 * 1024 * 1024},
    {"Fake GPU H", "GPU-00000000-0000-0000-0000-000000000001", "00000000:5E:00.0", 9, 0, 150ULL * 1024 * 1024 * 1024},
};
int g_initialised = 0;

int CopyText(const char* text, char* out, unsigned length) {
  if (std::strlen(text) + 1 > length) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::strcpy(out, text);
  return 0;
}
}  // namespace

extern "C" {
struct nvmlDevice_st;
struct FakeMemory {
  unsigned long long total, free, used;
};
struct FakePciInfo {  // nvmlPciInfo_t
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

__attribute__((visibility("default"))) int nvmlInit_v2() {
  ++g_initialised;
  return 0;
}
__attribute__((visibility("default"))) int nvmlShutdown() {
  --g_initialised;
  return 0;
}
__attribute__((visibility("default"))) const char* nvmlErrorString(int) { return "fake NVML error"; }
__attribute__((visibility("default"))) int nvmlSystemGetDriverVersion(char* version, unsigned length) {
  return g_initialised > 0 ? CopyText("999.12", version, length) : 1;
}
__attribute__((visibility("default"))) int nvmlSystemGetCudaDriverVersion_v2(int* version) {
  *version = 12080;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = 2;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_st** device) {
  if (index >= 2) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = reinterpret_cast<nvmlDevice_st*>(const_cast<FakeDevice*>(&kDevices[index]));
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetName(nvmlDevice_st* device, char* name, unsigned length) {
  return CopyText(reinterpret_cast<const FakeDevice*>(device)->name, name, length);
}
__attribute__((visibility("default"))) int nvmlDeviceGetUUID(nvmlDevice_st* device, char* uuid, unsigned length) {
  return CopyText(reinterpret_cast<const FakeDevice*>(device)->uuid, uuid, length);
}
__attribute__((visibility("default"))) int nvmlDeviceGetCudaComputeCapability(nvmlDevice_st* device, int* major,
                                                                              int* minor) {
  *major = reinterpret_cast<const FakeDevice*>(device)->cc_major;
  *minor = reinterpret_cast<const FakeDevice*>(device)->cc_minor;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(nvmlDevice_st* device, FakeMemory* memory) {
  memory->total = reinterpret_cast<const FakeDevice*>(device)->memory;
  memory->free = memory->total / 2;
  memory->used = memory->total - memory->free;
  return 0;
}
__attribute__((visibility("default"))) int nvmlDeviceGetPciInfo_v3(nvmlDevice_st* device, FakePciInfo* pci) {
  std::memset(pci, 0, sizeof *pci);
  return CopyText(reinterpret_cast<const FakeDevice*>(device)->pci_bus_id, pci->busId, sizeof pci->busId);
}
}
