// The CUDA driver (libcuda.so.1 / nvcuda.dll, shipped with the NVIDIA driver), loaded
// at run time, for the two things a build needs to know about its GPU: which devices
// CUDA numbers how, and making one of them current as cudaSetDevice does.
//
// Why not NVML alone: NVML numbers GPUs in PCI order and ignores CUDA_VISIBLE_DEVICES;
// CUDA numbers them fastest first (or PCI order with CUDA_DEVICE_ORDER=PCI_BUS_ID)
// among the visible ones. The builder uses CUDA's numbering, so GPU facts are found
// through CUDA's device and matched to NVML by PCI bus id.
//
// Threading: QueryCudaDevices() may be called from any thread. A CudaDeviceSelection
// affects only the thread that made it and must be destroyed on that thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "platform/shared_library.h"

namespace trtwatch {

struct CudaDevice {
  int ordinal = 0;          // CUDA's device number: what --device and cudaSetDevice take
  std::string name;
  std::string pci_bus_id;   // "0000:3b:00.0"
  int cc_major = 0;         // compute capability
  int cc_minor = 0;
  uint64_t memory_total_bytes = 0;
};

struct CudaReport {
  bool loaded = false;     // the driver was found and initialised
  std::string library;     // what was loaded (path when known)
  std::string error;       // why not, or a partial failure
  int driver_version = 0;  // e.g. 12040 for CUDA 12.4; 0 if unknown
  std::vector<CudaDevice> devices;  // in CUDA's order, the visible devices only
};

// libcuda.so.1, nvcuda.dll (platform/<os>/shared_library.cc). Tests pass a stand-in's path.
extern const char* const kCudaDriverLibrary;

CudaReport QueryCudaDevices(const std::string& library = kCudaDriverLibrary);

// Empty when `report` has device `ordinal`; otherwise why not, and what to do.
std::string CudaDeviceProblem(const CudaReport& report, int ordinal);

// Device `ordinal`'s primary context, current on the calling thread for the life of
// the object (what cudaSetDevice does, through the driver: the CUDA runtime inside
// TensorRT then uses it). The thread's previous context is current again afterwards.
class CudaDeviceSelection {
 public:
  // Null with the reason (the driver missing, no such device) and its fix.
  static std::unique_ptr<CudaDeviceSelection> Select(int ordinal, std::string* error,
                                                     const std::string& library = kCudaDriverLibrary);
  ~CudaDeviceSelection();
  CudaDeviceSelection(const CudaDeviceSelection&) = delete;
  CudaDeviceSelection& operator=(const CudaDeviceSelection&) = delete;

 private:
  using Context = void*;  // CUcontext
  CudaDeviceSelection(std::unique_ptr<SharedLibrary> driver, int device, Context previous)
      : driver_(std::move(driver)), device_(device), previous_(previous) {}

  const std::unique_ptr<SharedLibrary> driver_;
  const int device_;         // CUdevice
  const Context previous_;   // current on this thread before Select()
};

// Whether two PCI bus ids name the same device, whatever their spelling
// ("0000:3b:00.0" from CUDA, "00000000:3B:00.0" from NVML).
bool SamePciBusId(const std::string& a, const std::string& b);

}  // namespace trtwatch
