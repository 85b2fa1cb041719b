#include "core/memory_size.h"

#include <gtest/gtest.h>

namespace trtwatch {
namespace {

TEST(MemorySizeTest, UnitsAndDefaultMiB) {
  EXPECT_EQ(ParseMemorySize("4096", "--memPoolSize").bytes, 4096ULL << 20);
  EXPECT_EQ(ParseMemorySize("4G", "--memPoolSize").bytes, 4ULL << 30);
  EXPECT_EQ(ParseMemorySize("512K", "--memPoolSize").bytes, 512ULL << 10);
  EXPECT_EQ(ParseMemorySize("100B", "--memPoolSize").bytes, 100u);
  EXPECT_EQ(ParseMemorySize("1.5G", "--memPoolSize").bytes, 3ULL << 29);
  EXPECT_EQ(ParseMemorySize("64m", "--max-upload-size").bytes, 64ULL << 20);
}

TEST(MemorySizeTest, BadSizesNameTheFlagAndTheForm) {
  for (const char* bad : {"", "G", "-1", "0", "4T", "four", "1e30G"}) {
    const MemorySize size = ParseMemorySize(bad, "--engine-cache-max-size");
    EXPECT_FALSE(size.bytes.has_value()) << bad;
    EXPECT_EQ(size.error.rfind("--engine-cache-max-size: ", 0), 0u) << size.error;
    EXPECT_NE(size.error.find("512M or 4G"), std::string::npos) << size.error;
  }
}

}  // namespace
}  // namespace trtwatch
