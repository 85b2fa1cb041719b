// The process-wide settings of platform/process_limits.h (POSIX): the descriptor limit
// raised to the hard one, and SIGPIPE ignored.
#include "platform/process_limits.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>

namespace trtwatch {
namespace {

int64_t AsLimit(rlim_t value) { return value == RLIM_INFINITY ? INT32_MAX : static_cast<int64_t>(value); }

TEST(ProcessLimitsTest, RaisesTheSoftDescriptorLimitToTheHardOne) {
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  if (before.rlim_max != RLIM_INFINITY && before.rlim_max < 64) GTEST_SKIP() << "hard limit too low to lower";
  // Start from a soft limit below the hard one, so that there is something to raise.
  rlimit lowered = before;
  lowered.rlim_cur = 32;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);

  const int64_t limit = RaiseOpenFileLimit();
  rlimit after{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, before.rlim_max);
  EXPECT_EQ(limit, AsLimit(after.rlim_cur));
  EXPECT_GE(limit, 64);
}

TEST(ProcessLimitsTest, AtTheHardLimitAlreadyItReportsItAgain) {
  const int64_t first = RaiseOpenFileLimit();
  EXPECT_EQ(RaiseOpenFileLimit(), first);
  rlimit now{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(now.rlim_cur, now.rlim_max);
  EXPECT_EQ(first, AsLimit(now.rlim_cur));
}

TEST(ProcessLimitsTest, WritingToAPipeWithoutReaderFailsInsteadOfEndingTheProcess) {
  IgnoreBrokenPipe();
  struct sigaction current {};
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &current), 0);
  EXPECT_EQ(current.sa_handler, SIG_IGN);

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  errno = 0;
  EXPECT_EQ(::write(fds[1], "x", 1), -1);  // with SIGPIPE's default, the test binary would die here
  EXPECT_EQ(errno, EPIPE);
  ::close(fds[1]);
}

}  // namespace
}  // namespace trtwatch
