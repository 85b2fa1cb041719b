// The non-blocking lock of platform/file_lock.h (POSIX): what keeps a second service
// off a data dir.
#include "platform/file_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "support/temp_dir_test.h"

namespace trtwatch {
namespace {

using Outcome = TryLockResult::Outcome;

class FileLockTest : public testing::TempDirTest {
 protected:
  std::string LockPath() const { return dir_ + "/data.lock"; }
};

TEST_F(FileLockTest, TryAcquireTakesAFreeLockAndWritesThisProcessesPid) {
  TryLockResult first = FileLock::TryAcquire(LockPath());
  ASSERT_EQ(first.outcome, Outcome::kAcquired) << first.error;
  ASSERT_TRUE(first.lock);
  std::ifstream in(LockPath());
  long pid = 0;
  in >> pid;
  EXPECT_EQ(pid, static_cast<long>(::getpid()));
}

TEST_F(FileLockTest, TwoLocksInOneProcessExcludeEachOtherAndTheSecondNamesTheHolder) {
  TryLockResult first = FileLock::TryAcquire(LockPath());
  ASSERT_EQ(first.outcome, Outcome::kAcquired) << first.error;
  const TryLockResult second = FileLock::TryAcquire(LockPath());
  EXPECT_EQ(second.outcome, Outcome::kHeld);
  EXPECT_FALSE(second.lock);
  EXPECT_EQ(second.holder_pid, static_cast<long>(::getpid()));
  EXPECT_EQ(second.error, "");
}

TEST_F(FileLockTest, TheLockIsReleasedWhenItsHolderIsDestroyed) {
  {
    const TryLockResult first = FileLock::TryAcquire(LockPath());
    ASSERT_EQ(first.outcome, Outcome::kAcquired) << first.error;
  }
  const TryLockResult again = FileLock::TryAcquire(LockPath());
  EXPECT_EQ(again.outcome, Outcome::kAcquired) << again.error;
}

TEST_F(FileLockTest, AnotherProcessIsRefusedWhileTheLockIsHeld) {
  const TryLockResult held = FileLock::TryAcquire(LockPath());
  ASSERT_EQ(held.outcome, Outcome::kAcquired) << held.error;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const TryLockResult other = FileLock::TryAcquire(LockPath());
    ::_exit(other.outcome == Outcome::kHeld && other.holder_pid == static_cast<long>(::getppid()) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child was not refused with this PID";
}

TEST_F(FileLockTest, AnUnusableLockPathIsAnErrorNotAHolder) {
  const TryLockResult result = FileLock::TryAcquire(dir_ + "/missing/data.lock");
  EXPECT_EQ(result.outcome, Outcome::kError);
  EXPECT_NE(result.error.find("missing/data.lock"), std::string::npos) << result.error;
}

}  // namespace
}  // namespace trtwatch
