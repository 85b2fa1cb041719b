#include "builds/executors/gpu_slots.h"

#include <algorithm>
#include <charconv>

namespace trtwatch::builds {

namespace {

constexpr char kListRule[] = "--gpus takes CUDA's device numbers, comma-separated, each once (e.g. --gpus 0,2,3); "
                             "`trtwatch doctor` lists them";
constexpr int kMaxOrdinal = 1023;

std::string HostGpus(const std::vector<SlotGpu>& gpus) {
  std::string text;
  for (const SlotGpu& g : gpus) text += (text.empty() ? "" : "; ") + g.Describe();
  return text.empty() ? "CUDA sees no GPU here" : "its GPUs: " + text;
}

}  // namespace

std::string SlotGpu::Describe() const {
  std::string text = "GPU " + std::to_string(device.ordinal) + " (" + device.name;
  if (!device.pci_bus_id.empty()) text += ", PCI " + device.pci_bus_id;
  if (!uuid.empty()) text += ", " + uuid;
  return text + ")";
}

GpuListResult ParseGpuList(std::string_view text) {
  GpuListResult r;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    int ordinal = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), ordinal);
    const bool repeated = std::find(r.ordinals.begin(), r.ordinals.end(), ordinal) != r.ordinals.end();
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || ordinal < 0 ||
        ordinal > kMaxOrdinal || repeated || comma == text.size() - 1) {
      return {{}, kListRule};
    }
    r.ordinals.push_back(ordinal);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return r;
}

GpuSlotsResult GpuSlots::Make(std::vector<SlotGpu> gpus, const std::vector<int>& only, int builds_per_gpu) {
  GpuSlotsResult r;
  if (builds_per_gpu < 1) {
    r.error = "--builds-per-gpu must be at least 1 (builds that share one GPU at once)";
    return r;
  }
  for (const int ordinal : only) {
    const bool known = std::any_of(gpus.begin(), gpus.end(), [&](const SlotGpu& g) { return g.device.ordinal == ordinal; });
    if (!known) {
      r.error = "--gpus names GPU " + std::to_string(ordinal) + ", which this host lacks; " + HostGpus(gpus);
      return r;
    }
  }
  if (!only.empty()) {
    std::erase_if(gpus, [&](const SlotGpu& g) { return std::find(only.begin(), only.end(), g.device.ordinal) == only.end(); });
  }
  r.slots.gpus_ = std::move(gpus);
  r.slots.builds_per_gpu_ = builds_per_gpu;
  return r;
}

int GpuSlots::capacity() const { return static_cast<int>(gpus_.size()) * builds_per_gpu_; }

bool GpuSlots::AnyFits(const Fits& fits) const { return std::any_of(gpus_.begin(), gpus_.end(), fits); }

int GpuSlots::HoldersOf(const std::string& pci_bus_id) const {
  return static_cast<int>(std::count_if(held_.begin(), held_.end(), [&](const auto& h) { return h.second == pci_bus_id; }));
}

std::optional<SlotGpu> GpuSlots::Take(const std::string& build_id, const Fits& fits) {
  if (held_.contains(build_id)) return std::nullopt;  // one GPU per build
  const SlotGpu* best = nullptr;
  int best_holders = builds_per_gpu_;
  for (const SlotGpu& g : gpus_) {
    const int holders = HoldersOf(g.device.pci_bus_id);
    if (holders < best_holders && fits(g)) {
      best = &g;
      best_holders = holders;
    }
  }
  if (best == nullptr) return std::nullopt;
  held_[build_id] = best->device.pci_bus_id;
  return *best;
}

void GpuSlots::Release(const std::string& build_id) { held_.erase(build_id); }

std::vector<SlotGpu> GpuSlots::TakeOutMissing(const std::vector<SlotGpu>& present) {
  std::vector<SlotGpu> gone;
  std::erase_if(gpus_, [&](const SlotGpu& g) {
    const bool listed = std::any_of(present.begin(), present.end(), [&](const SlotGpu& p) {
      return SamePciBusId(p.device.pci_bus_id, g.device.pci_bus_id);
    });
    if (!listed) gone.push_back(g);
    return !listed;
  });
  return gone;
}

}  // namespace trtwatch::builds
