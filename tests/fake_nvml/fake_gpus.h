// The made-up machine that tests/fake_cuda and tests/fake_nvml both describe. By default
// two GPUs: "Fake GPU H" (9.0, PCI 5e) and "Fake GPU A" (8.0, PCI 3b), CUDA numbering H
// first (fastest first), NVML A first (PCI order). TRTWATCH_FAKE_GPUS names a file
// describing another, one GPU a line in CUDA's default order ('#' starts a comment):
//
//   NAME|PCI_BUS_ID|UUID|MAJOR.MINOR|MEMORY_GIB[|lost]
//   Fake GPU H|0000:9a:00.0|GPU-11111111-0000-0000-0000-000000000000|9.0|141
//
// "lost": the GPU fell off the bus: CUDA cannot open it (cuDeviceGet fails with
// CUDA_ERROR_DEVICES_UNAVAILABLE), NVML no longer lists it. Both stand-ins read the file
// at every cuInit / nvmlInit, so a test may change it while a process runs. Test code
// (not NVIDIA's), header-only: each stand-in is a module of its own.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace fake_gpus {

struct FakeGpu {
  std::string name;
  std::string pci_bus_id;  // CUDA's spelling: "0000:3b:00.0"
  std::string uuid;
  int cc_major = 0;
  int cc_minor = 0;
  unsigned long long memory = 0;
  bool lost = false;
};

inline std::vector<FakeGpu> Defaults() {
  constexpr unsigned long long kGiB = 1024ULL * 1024 * 1024;
  return {{"Fake GPU H", "0000:5e:00.0", "GPU-00000000-0000-0000-0000-000000000001", 9, 0, 150 * kGiB, false},
          {"Fake GPU A", "0000:3b:00.0", "GPU-00000000-0000-0000-0000-000000000002", 8, 0, 80 * kGiB, false}};
}

inline std::vector<std::string> Split(const std::string& line, char sep) {
  std::vector<std::string> parts(1);
  for (char c : line) {
    if (c == sep) parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

// The machine TRTWATCH_FAKE_GPUS describes (lines that do not parse are skipped), or the default.
inline std::vector<FakeGpu> Load() {
  const char* path = std::getenv("TRTWATCH_FAKE_GPUS");
  if (path == nullptr || *path == '\0') return Defaults();
  std::vector<FakeGpu> gpus;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = Split(line, '|');
    if (f.size() < 5 || f[3].find('.') == std::string::npos) continue;
    FakeGpu g{f[0], f[1], f[2], std::atoi(f[3].c_str()), std::atoi(f[3].c_str() + f[3].find('.') + 1),
              std::strtoull(f[4].c_str(), nullptr, 10) * 1024ULL * 1024 * 1024, f.size() > 5 && f[5] == "lost"};
    gpus.push_back(g);
  }
  return gpus;
}

// Indexes of `gpus` in the file's order (CUDA's default), and in PCI bus order (NVML's,
// and CUDA's with CUDA_DEVICE_ORDER=PCI_BUS_ID).
inline std::vector<int> ListOrder(const std::vector<FakeGpu>& gpus) {
  std::vector<int> order;
  for (size_t i = 0; i < gpus.size(); ++i) order.push_back(static_cast<int>(i));
  return order;
}
inline std::vector<int> PciOrder(const std::vector<FakeGpu>& gpus) {
  std::vector<int> order = ListOrder(gpus);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return gpus[static_cast<size_t>(a)].pci_bus_id < gpus[static_cast<size_t>(b)].pci_bus_id;
  });
  return order;
}

// NVML's spelling of a PCI bus id: "0000:3b:00.0" -> "00000000:3B:00.0".
inline std::string NvmlBusId(const std::string& cuda) {
  std::string upper;
  for (char c : cuda) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "0000" + upper;
}

}  // namespace fake_gpus
