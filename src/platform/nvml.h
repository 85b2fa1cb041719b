// NVIDIA driver facts through NVML (libnvidia-ml.so.1 / nvml.dll, shipped with the driver),
// loaded at run time so that trtwatch runs, and says so plainly, without a driver.
//
// Threading: QueryNvml() may be called from any thread; each call loads, initialises,
// reads and shuts NVML down again (NVML reference-counts init/shutdown).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "platform/cuda_driver.h"

namespace trtwatch {

struct GpuInfo {
  unsigned index = 0;
  std::string name;
  int cc_major = 0;  // CUDA compute capability
  int cc_minor = 0;
  uint64_t memory_total_bytes = 0;
  std::string uuid;
  std::string pci_bus_id;  // "00000000:3B:00.0": how CUDA's numbering is matched to NVML's
};

struct NvmlReport {
  bool loaded = false;       // the library was found and initialised
  std::string library;       // what was loaded (path when known)
  std::string error;         // why not, or a partial failure
  std::string driver_version;
  int cuda_driver_version = 0;  // e.g. 12040 for CUDA 12.4; 0 if unknown
  std::vector<GpuInfo> gpus;
};

// The standard library name on this platform (platform/<os>/shared_library.cc):
// libnvidia-ml.so.1, nvml.dll. Tests pass a stand-in's path.
extern const char* const kNvmlLibrary;

NvmlReport QueryNvml(const std::string& library = kNvmlLibrary);

// NVML's entry for CUDA's `device` (the same PCI bus id), or null.
const GpuInfo* NvmlEntryFor(const NvmlReport& report, const CudaDevice& device);

// "12.4" from 12040.
std::string FormatCudaVersion(int version);
// "80.0 GiB".
std::string FormatGpuMemory(uint64_t bytes);

}  // namespace trtwatch
