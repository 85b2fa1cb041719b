// The local executor's GPU slots (builds/executors/gpu_slots.h): one build per GPU (or
// per share), routed needs met only by their GPUs, --gpus, and a lost GPU.
#include "builds/executors/gpu_slots.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace trtwatch::builds {
namespace {

// 8 GPUs of two types as CUDA numbers them (fastest first): H at PCI 0x9a..0xe1, A below.
std::vector<SlotGpu> EightGpus() {
  const char* const buses[] = {"0000:9a:00.0", "0000:a1:00.0", "0000:c3:00.0", "0000:e1:00.0",
                               "0000:1b:00.0", "0000:2a:00.0", "0000:3b:00.0", "0000:5e:00.0"};
  std::vector<SlotGpu> gpus;
  for (int i = 0; i < 8; ++i) {
    SlotGpu g;
    g.device.ordinal = i;
    g.device.name = i < 4 ? "Fake GPU H" : "Fake GPU A";
    g.device.cc_major = i < 4 ? 9 : 8;
    g.device.pci_bus_id = buses[i];
    g.uuid = "GPU-" + std::to_string(i);
    gpus.push_back(g);
  }
  return gpus;
}

GpuSlots Slots(const std::vector<int>& only = {}, int per_gpu = 1) {
  GpuSlotsResult r = GpuSlots::Make(EightGpus(), only, per_gpu);
  EXPECT_EQ(r.error, "");
  return r.slots;
}

const GpuSlots::Fits kAny = [](const SlotGpu&) { return true; };
const GpuSlots::Fits kHopper = [](const SlotGpu& g) { return g.device.cc_major == 9; };

TEST(GpuSlotsTest, EachBuildHoldsAGpuOfItsOwnUntilItIsReleased) {
  GpuSlots slots = Slots();
  EXPECT_EQ(slots.capacity(), 8);
  std::set<std::string> held;
  for (int i = 0; i < 8; ++i) {
    const std::optional<SlotGpu> gpu = slots.Take("b_" + std::to_string(i), kAny);
    ASSERT_TRUE(gpu);
    EXPECT_TRUE(held.insert(gpu->device.pci_bus_id).second) << "given twice: " << gpu->Describe();
  }
  EXPECT_FALSE(slots.Take("b_8", kAny));  // all busy: it waits
  slots.Release("b_3");
  const std::optional<SlotGpu> freed = slots.Take("b_8", kAny);
  ASSERT_TRUE(freed);
  EXPECT_EQ(freed->device.ordinal, 3);
  EXPECT_FALSE(slots.Take("b_8", kAny));  // a build holds one GPU, never two
}

TEST(GpuSlotsTest, ARoutedBuildGetsOnlyAGpuOfItsTypeAndWaitsWhenTheyAreBusy) {
  GpuSlots slots = Slots();
  for (int i = 0; i < 4; ++i) {
    const std::optional<SlotGpu> gpu = slots.Take("h_" + std::to_string(i), kHopper);
    ASSERT_TRUE(gpu);
    EXPECT_EQ(gpu->device.cc_major, 9);
  }
  EXPECT_FALSE(slots.Take("h_4", kHopper));  // four A GPUs are free, but they are not what it asks
  EXPECT_TRUE(slots.AnyFits(kHopper));       // ... and it can wait for one
  const std::optional<SlotGpu> any = slots.Take("any", kAny);
  ASSERT_TRUE(any);
  EXPECT_EQ(any->device.name, "Fake GPU A");
}

TEST(GpuSlotsTest, BuildsPerGpuSharesEachGpuEvenly) {
  GpuSlots slots = Slots({}, 2);
  EXPECT_EQ(slots.capacity(), 16);
  std::vector<int> per_gpu(8, 0);
  for (int i = 0; i < 16; ++i) {
    const std::optional<SlotGpu> gpu = slots.Take("b_" + std::to_string(i), kAny);
    ASSERT_TRUE(gpu);
    ++per_gpu[static_cast<size_t>(gpu->device.ordinal)];
    if (i == 7) {
      EXPECT_EQ(per_gpu, std::vector<int>(8, 1)) << "the least used GPU first";
    }
  }
  EXPECT_EQ(per_gpu, std::vector<int>(8, 2));
  EXPECT_FALSE(slots.Take("b_16", kAny));
}

TEST(GpuSlotsTest, GpusLimitsTheServiceToTheGpusItNames) {
  GpuSlots slots = Slots({0, 2, 7});
  EXPECT_EQ(slots.capacity(), 3);
  std::set<int> given;
  for (int i = 0; i < 3; ++i) given.insert(slots.Take("b_" + std::to_string(i), kAny)->device.ordinal);
  EXPECT_EQ(given, (std::set<int>{0, 2, 7}));
  EXPECT_FALSE(slots.Take("b_3", kAny));

  const GpuSlotsResult missing = GpuSlots::Make(EightGpus(), {8}, 1);
  EXPECT_NE(missing.error.find("--gpus names GPU 8, which this host lacks"), std::string::npos) << missing.error;
  EXPECT_NE(missing.error.find("GPU 7 (Fake GPU A, PCI 0000:5e:00.0, GPU-7)"), std::string::npos) << missing.error;
  EXPECT_NE(GpuSlots::Make({}, {0}, 1).error.find("CUDA sees no GPU here"), std::string::npos);
  EXPECT_NE(GpuSlots::Make(EightGpus(), {}, 0).error.find("--builds-per-gpu must be at least 1"), std::string::npos);
}

TEST(GpuSlotsTest, AGpuTheDriverNoLongerListsIsTakenOutOfService) {
  GpuSlots slots = Slots();
  ASSERT_EQ(slots.Take("b_0", kAny)->device.ordinal, 0);
  std::vector<SlotGpu> now = EightGpus();
  now.erase(now.begin() + 1);                    // GPU 1 fell off the bus
  now[0].device.pci_bus_id = "00000000:9A:00.0";  // NVML's spelling is the same GPU
  const std::vector<SlotGpu> gone = slots.TakeOutMissing(now);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].device.pci_bus_id, "0000:a1:00.0");
  EXPECT_EQ(slots.capacity(), 7);
  for (int i = 1; i < 7; ++i) EXPECT_NE(slots.Take("b_" + std::to_string(i), kAny)->device.ordinal, 1);
  EXPECT_FALSE(slots.Take("b_7", kAny));  // GPU 0 is still held by b_0
  EXPECT_TRUE(slots.TakeOutMissing(now).empty());
}

TEST(GpuSlotsTest, GpusFlagTakesCudasNumbersEachOnce) {
  EXPECT_EQ(ParseGpuList("0,2,3").ordinals, (std::vector<int>{0, 2, 3}));
  EXPECT_TRUE(ParseGpuList("").ordinals.empty());
  for (const char* bad : {"0,,1", "0,", ",1", "a", "-1", "1,1", "0x1", "2000", " 1"}) {
    EXPECT_NE(ParseGpuList(bad).error.find("--gpus takes CUDA's device numbers"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace trtwatch::builds
