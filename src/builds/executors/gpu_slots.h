// GpuSlots: this host's GPUs as the local executor's build slots. Each build holds a
// GPU of its own (or one of its `builds_per_gpu` shares) from its start to its end, so
// builds neither share a device by accident nor disturb each other's timings. A GPU is
// known by its PCI bus id (and NVML's UUID, which CUDA_VISIBLE_DEVICES also accepts),
// never by its position alone: CUDA numbers GPUs fastest first (or in PCI order with
// CUDA_DEVICE_ORDER=PCI_BUS_ID), NVML in PCI order, so a position means nothing
// outside the numbering it came from. A GPU the driver no longer lists is taken out
// of service; its builds end on their own, and no build is given it again.
// Pure bookkeeping, unit-tested in tests/unit/gpu_slots_test.cc; docs/deploy.md says how
// GPUs are assigned.
//
// Threading: a value; the local executor uses it on its event loop's thread.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/cuda_driver.h"  // CudaDevice

namespace trtwatch::builds {

// One GPU of this host: CUDA's view (its ordinal in the service's process) and NVML's UUID.
struct SlotGpu {
  CudaDevice device;
  std::string uuid;  // "GPU-…"; empty when NVML was not found
  // "GPU 1 (NVIDIA H200, PCI 0000:5e:00.0, GPU-…)": for messages.
  std::string Describe() const;
};

struct GpuListResult {
  std::vector<int> ordinals;  // empty: every GPU
  std::string error;          // the rule, with an example
};
// `--gpus` "0,2,3": CUDA's device numbers (as `trtwatch doctor` lists them), each once.
[[nodiscard]] GpuListResult ParseGpuList(std::string_view text);

class GpuSlots;
struct GpuSlotsResult;

class GpuSlots {
 public:
  using Fits = std::function<bool(const SlotGpu&)>;

  // The host's `gpus` (CUDA's order), limited to `only` when it names any (each must be
  // one of them), each shared by `builds_per_gpu` builds (at least 1).
  [[nodiscard]] static GpuSlotsResult Make(std::vector<SlotGpu> gpus, const std::vector<int>& only,
                                           int builds_per_gpu);

  // Builds that may hold a GPU at once: GPUs in service times builds_per_gpu.
  [[nodiscard]] int capacity() const;
  [[nodiscard]] const std::vector<SlotGpu>& in_service() const { return gpus_; }
  // Whether some GPU in service fits, free or not (else a build waiting for one waits forever).
  [[nodiscard]] bool AnyFits(const Fits& fits) const;
  // A free share of a GPU that fits, now held by `build_id`: the least used such GPU,
  // then CUDA's lowest number. None when every one that fits is full.
  [[nodiscard]] std::optional<SlotGpu> Take(const std::string& build_id, const Fits& fits);
  // The share `build_id` held, free again (nothing when it held none).
  void Release(const std::string& build_id);
  // The GPUs in service that `present` (the driver's list now) lacks, by PCI bus id,
  // taken out of service and returned, for the warning. Their holders keep their hold.
  [[nodiscard]] std::vector<SlotGpu> TakeOutMissing(const std::vector<SlotGpu>& present);

 private:
  int HoldersOf(const std::string& pci_bus_id) const;

  std::vector<SlotGpu> gpus_;              // in service, CUDA's order
  int builds_per_gpu_ = 1;
  std::map<std::string, std::string> held_;  // build id -> the PCI bus id of its GPU
};

struct GpuSlotsResult {
  GpuSlots slots;
  std::string error;  // empty when made; else what is wrong, naming the host's GPUs
};

}  // namespace trtwatch::builds
