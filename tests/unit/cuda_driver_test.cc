#include "platform/cuda_driver.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "platform/nvml.h"

namespace trtwatch {
namespace {

// CUDA_VISIBLE_DEVICES for one test, restored afterwards.
class VisibleDevices {
 public:
  explicit VisibleDevices(const char* value) {
    if (const char* old = std::getenv("CUDA_VISIBLE_DEVICES")) old_ = old;
    ::setenv("CUDA_VISIBLE_DEVICES", value, 1);
  }
  ~VisibleDevices() {
    if (old_.empty()) ::unsetenv("CUDA_VISIBLE_DEVICES");
    else ::setenv("CUDA_VISIBLE_DEVICES", old_.c_str(), 1);
  }

 private:
  std::string old_;
};

// What the stand-in driver says is current (tests/fake_cuda).
int FakeCudaAnswer(const char* function) {
  void* handle = ::dlopen(TRTWATCH_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
  auto fn = reinterpret_cast<int (*)()>(::dlsym(handle, function));
  const int answer = fn();
  ::dlclose(handle);
  return answer;
}

TEST(CudaDriverTest, AbsentDriverDegradesToAnExplanation) {
  const CudaReport report = QueryCudaDevices("libtrtwatch-no-such-cuda.so.1");
  EXPECT_FALSE(report.loaded);
  EXPECT_TRUE(report.devices.empty());
  EXPECT_NE(report.error.find("libtrtwatch-no-such-cuda.so.1"), std::string::npos) << report.error;
  std::string error;
  EXPECT_EQ(CudaDeviceSelection::Select(0, &error, "libtrtwatch-no-such-cuda.so.1"), nullptr);
  EXPECT_NE(error.find("could not be loaded"), std::string::npos) << error;
}

TEST(CudaDriverTest, ListsDevicesInCudasOrderAndMatchesThemToNvml) {
  const CudaReport cuda = QueryCudaDevices(TRTWATCH_FAKE_CUDA);
  ASSERT_TRUE(cuda.loaded) << cuda.error;
  EXPECT_EQ(FormatCudaVersion(cuda.driver_version), "12.8");
  ASSERT_EQ(cuda.devices.size(), 2u);
  EXPECT_EQ(cuda.devices[0].name, "Fake GPU H");  // fastest first
  EXPECT_EQ(cuda.devices[0].cc_major, 9);
  EXPECT_EQ(FormatGpuMemory(cuda.devices[0].memory_total_bytes), "150.0 GiB");
  EXPECT_EQ(cuda.devices[1].name, "Fake GPU A");

  // NVML lists them the other way round (PCI order): matched by bus id, not index.
  const NvmlReport nvml = QueryNvml(TRTWATCH_FAKE_NVML);
  const GpuInfo* first = NvmlEntryFor(nvml, cuda.devices[0]);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->index, 1u);
  EXPECT_EQ(first->uuid, "GPU-00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(NvmlEntryFor(nvml, cuda.devices[1])->index, 0u);
}

TEST(CudaDriverTest, FollowsCudaVisibleDevices) {
  VisibleDevices only_a("1");
  const CudaReport cuda = QueryCudaDevices(TRTWATCH_FAKE_CUDA);
  ASSERT_EQ(cuda.devices.size(), 1u);
  EXPECT_EQ(cuda.devices[0].name, "Fake GPU A");
  EXPECT_EQ(CudaDeviceProblem(cuda, 0), "");
  const std::string problem = CudaDeviceProblem(cuda, 1);
  EXPECT_NE(problem.find("CUDA has no device 1: it sees 1, numbered 0-0 (CUDA_VISIBLE_DEVICES=1)"), std::string::npos)
      << problem;
}

TEST(CudaDriverTest, SelectionMakesThePrimaryContextCurrentAndRestoresThePrevious) {
  VisibleDevices only_a("1");
  ASSERT_EQ(FakeCudaAnswer("fake_cuda_current_device"), -1);
  {
    std::string error;
    auto selection = CudaDeviceSelection::Select(0, &error, TRTWATCH_FAKE_CUDA);
    ASSERT_NE(selection, nullptr) << error;
    EXPECT_EQ(FakeCudaAnswer("fake_cuda_current_device"), 1);  // CUDA's 0 is the machine's second GPU
    EXPECT_EQ(FakeCudaAnswer("fake_cuda_retained_device"), 1);
  }
  EXPECT_EQ(FakeCudaAnswer("fake_cuda_current_device"), -1);
  EXPECT_EQ(FakeCudaAnswer("fake_cuda_retained_device"), -1);

  std::string error;
  EXPECT_EQ(CudaDeviceSelection::Select(3, &error, TRTWATCH_FAKE_CUDA), nullptr);
  EXPECT_NE(error.find("CUDA has no device 3"), std::string::npos) << error;
}

TEST(CudaDriverTest, ComparesPciBusIdsWhateverTheirSpelling) {
  EXPECT_TRUE(SamePciBusId("0000:3b:00.0", "00000000:3B:00.0"));
  EXPECT_FALSE(SamePciBusId("0000:3b:00.0", "00000000:5E:00.0"));
  EXPECT_FALSE(SamePciBusId("", ""));
  EXPECT_FALSE(SamePciBusId("garbage", "garbage"));
}

}  // namespace
}  // namespace trtwatch
