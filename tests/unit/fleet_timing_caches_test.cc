// The service's side of the fleet timing caches (builds/fleet_timing_caches.h): a
// download is a snapshot that a later merge cannot change, its digest is that of its
// bytes, and nothing waits on a cache that a build is merging.
#include "builds/fleet_timing_caches.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "backends/timing_cache_file.h"
#include "platform/atomic_file.h"
#include "platform/file_lock.h"
#include "platform/sha256.h"
#include "support/temp_dir_test.h"

namespace trtwatch::builds {
namespace {

constexpr char kName[] = "tensorrt-10.16.0_nvidia-h100-sm-9.0.cache";

class FleetTimingCachesTest : public testing::TempDirTest {
 protected:
  void Write(const std::string& bytes) {
    std::string error;
    ASSERT_TRUE(WriteFileAtomically(dir_ + "/" + kName, bytes, &error)) << error;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

TEST_F(FleetTimingCachesTest, ADownloadIsASnapshotThatALaterMergeDoesNotChange) {
  const FleetTimingCaches caches(dir_);
  Write("first version");
  const FleetTimingCaches::Download first = caches.Snapshot(kName);
  ASSERT_EQ(first.outcome, FleetTimingCaches::Outcome::kDone) << first.error;
  EXPECT_EQ(first.file.sha256, HexOf(Sha256Of("first version")));
  EXPECT_EQ(first.file.size, 13u);
  std::ifstream being_sent(first.path, std::ios::binary);  // a download in flight holds it open

  Write("second, longer version");
  const FleetTimingCaches::Download second = caches.Snapshot(kName);
  ASSERT_EQ(second.outcome, FleetTimingCaches::Outcome::kDone) << second.error;
  EXPECT_EQ(Read(second.path), "second, longer version");
  EXPECT_EQ(second.file.sha256, HexOf(Sha256Of("second, longer version")));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(being_sent), {}), "first version")
      << "the bytes of a download in flight are those its digest was made of";
  ASSERT_EQ(caches.List().size(), 1u) << "snapshots are not caches";
}

TEST_F(FleetTimingCachesTest, ACacheBeingMergedIsBusyNotWaitedFor) {
  const FleetTimingCaches caches(dir_);
  Write("bytes");
  std::string error;
  const std::unique_ptr<FileLock> merging = FileLock::Acquire(TimingCacheLockFile(dir_ + "/" + kName), &error);
  ASSERT_TRUE(merging) << error;
  EXPECT_EQ(caches.Snapshot(kName).outcome, FleetTimingCaches::Outcome::kBusy);
  const FleetTimingCaches::Removal removal = caches.Remove(kName);
  EXPECT_EQ(removal.outcome, FleetTimingCaches::Outcome::kBusy);
  EXPECT_NE(removal.error.find("retry"), std::string::npos) << removal.error;
}

TEST_F(FleetTimingCachesTest, RemovalTakesTheCacheAndNamesOutsideTheRuleAreNotFound) {
  const FleetTimingCaches caches(dir_);
  Write("bytes");
  ASSERT_EQ(caches.Snapshot(kName).outcome, FleetTimingCaches::Outcome::kDone);
  EXPECT_EQ(caches.Remove(kName).outcome, FleetTimingCaches::Outcome::kDone);
  EXPECT_TRUE(caches.List().empty());
  EXPECT_EQ(caches.Remove(kName).outcome, FleetTimingCaches::Outcome::kNotFound);
  EXPECT_EQ(caches.Snapshot(kName).outcome, FleetTimingCaches::Outcome::kNotFound);
  for (const char* name : {"../x.cache", ".snapshots", "X.cache", "x.cache.use"}) {
    EXPECT_EQ(caches.Snapshot(name).outcome, FleetTimingCaches::Outcome::kNotFound) << name;
  }
  const FleetTimingCaches none("");
  EXPECT_NE(none.Snapshot(kName).error.find("--no-timing-caches"), std::string::npos);
}

}  // namespace
}  // namespace trtwatch::builds
