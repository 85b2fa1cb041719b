// The path checks and private folders of platform/file_access.h (POSIX).
#include "platform/file_access.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/temp_dir_test.h"

namespace trtwatch {
namespace {

namespace fs = std::filesystem;

class FileAccessTest : public testing::TempDirTest {
 protected:
  void TearDown() override {
    fs::remove_all(dir_);
    TempDirTest::TearDown();
  }
  mode_t Mode(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }
};

TEST_F(FileAccessTest, MakePrivateFolderCreatesAFolderForThisUserOnly) {
  const std::string folder = dir_ + "/data";
  const mode_t old_umask = ::umask(0);  // the mode must not depend on a permissive umask
  std::string error;
  const bool made = MakePrivateFolder(folder, &error);
  ::umask(old_umask);
  ASSERT_TRUE(made) << error;
  EXPECT_EQ(InspectPath(folder).kind, PathKind::kFolder);
  EXPECT_EQ(Mode(folder), 0700u);
}

TEST_F(FileAccessTest, MakePrivateFolderAcceptsAnExistingFolderAsItIs) {
  const std::string folder = dir_ + "/shared";
  ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
  ::chmod(folder.c_str(), 0755);
  std::string error;
  EXPECT_TRUE(MakePrivateFolder(folder, &error)) << error;
  EXPECT_EQ(Mode(folder), 0755u) << "an existing folder's permissions are left alone";
  EXPECT_TRUE(error.empty());
}

// Issue 22: trtwatch.db was created 0644 in a 0755 data dir. KeepPrivate narrows what
// is there, whatever the umask made it.
TEST_F(FileAccessTest, KeepPrivateNarrowsAFolderTo0700AndAFileTo0600) {
  const std::string folder = dir_ + "/open";
  const std::string file = dir_ + "/open.db";
  ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
  std::ofstream(file) << "x";
  ::chmod(folder.c_str(), 0755);
  ::chmod(file.c_str(), 0644);
  EXPECT_EQ(KeepPrivate(folder).outcome, PrivacyResult::Outcome::kPrivate);
  EXPECT_EQ(KeepPrivate(file).outcome, PrivacyResult::Outcome::kPrivate);
  EXPECT_EQ(Mode(folder), 0700u);
  EXPECT_EQ(Mode(file), 0600u);
  const PrivacyResult missing = KeepPrivate(dir_ + "/nothing");
  EXPECT_EQ(missing.outcome, PrivacyResult::Outcome::kFailed);
  EXPECT_EQ(missing.error, std::strerror(ENOENT));
}

TEST_F(FileAccessTest, MakePrivateFolderRefusesAFileInTheWay) {
  const std::string file = dir_ + "/file";
  std::ofstream(file) << "x";
  std::string error;
  EXPECT_FALSE(MakePrivateFolder(file, &error));
  EXPECT_EQ(error, std::strerror(EEXIST));
  EXPECT_EQ(InspectPath(file).kind, PathKind::kFile);
}

TEST_F(FileAccessTest, MakePrivateFolderCreatesOneLevelOnly) {
  std::string error;
  EXPECT_FALSE(MakePrivateFolder(dir_ + "/missing/data", &error));
  EXPECT_EQ(error, std::strerror(ENOENT));
  EXPECT_EQ(InspectPath(dir_ + "/missing").kind, PathKind::kMissing);
}

TEST_F(FileAccessTest, InspectPathTellsKindsAndWhyNothingIsThere) {
  std::ofstream(dir_ + "/file") << "x";
  EXPECT_EQ(InspectPath(dir_).kind, PathKind::kFolder);
  EXPECT_EQ(InspectPath(dir_ + "/file").kind, PathKind::kFile);
  EXPECT_EQ(InspectPath("/dev/null").kind, PathKind::kOther);
  const PathStatus missing = InspectPath(dir_ + "/nothing");
  EXPECT_EQ(missing.kind, PathKind::kMissing);
  EXPECT_TRUE(missing.not_found);
  EXPECT_FALSE(missing.error.empty());
}

}  // namespace
}  // namespace trtwatch
