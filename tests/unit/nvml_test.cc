#include "platform/nvml.h"

#include <gtest/gtest.h>

namespace trtwatch {
namespace {

TEST(NvmlTest, AbsentLibraryDegradesToAnExplanation) {
  const NvmlReport report = QueryNvml("libtrtwatch-no-such-nvml.so.1");
  EXPECT_FALSE(report.loaded);
  EXPECT_TRUE(report.gpus.empty());
  EXPECT_NE(report.error.find("libtrtwatch-no-such-nvml.so.1"), std::string::npos) << report.error;
}

TEST(NvmlTest, ReadsDriverAndGpusFromNvml) {
  const NvmlReport report = QueryNvml(TRTWATCH_FAKE_NVML);
  ASSERT_TRUE(report.loaded) << report.error;
  EXPECT_EQ(report.error, "");
  EXPECT_EQ(report.driver_version, "999.12");
  EXPECT_EQ(FormatCudaVersion(report.cuda_driver_version), "12.8");
  ASSERT_EQ(report.gpus.size(), 2u);
  EXPECT_EQ(report.gpus[0].name, "Fake GPU A");
  EXPECT_EQ(report.gpus[0].cc_major, 8);
  EXPECT_EQ(report.gpus[0].cc_minor, 0);
  EXPECT_EQ(FormatGpuMemory(report.gpus[0].memory_total_bytes), "80.0 GiB");
  EXPECT_EQ(report.gpus[0].pci_bus_id, "00000000:3B:00.0");
  EXPECT_EQ(report.gpus[1].index, 1u);
  EXPECT_EQ(report.gpus[1].name, "Fake GPU H");
  EXPECT_EQ(report.gpus[1].uuid, "GPU-00000000-0000-0000-0000-000000000001");
}

TEST(NvmlTest, FormatsVersions) {
  EXPECT_EQ(FormatCudaVersion(12040), "12.4");
  EXPECT_EQ(FormatCudaVersion(13000), "13.0");
  EXPECT_EQ(FormatCudaVersion(0), "");
}

}  // namespace
}  // namespace trtwatch
