// Status and Result<T>: the error style of new code.
#include "core/result.h"

#include <gtest/gtest.h>

#include <string>

namespace trtwatch {
namespace {

Result<int> Half(int n) {
  if (n % 2 != 0) return Status::Error(std::to_string(n) + " is odd; pass an even number");
  return n / 2;
}

Status Check(int n) {
  const Result<int> half = Half(n);
  if (!half.ok()) return half.status();  // passed on, text and all
  return OkStatus();
}

TEST(ResultTest, AValueIsOkAndAnErrorSaysWhatIsWrong) {
  const Result<int> good = Half(8);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 4);
  EXPECT_TRUE(good.error().empty());

  const Result<int> bad = Half(3);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "3 is odd; pass an even number");
}

TEST(ResultTest, AStatusPassesAFailureOn) {
  EXPECT_TRUE(Check(2).ok());
  const Status failed = Check(5);
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.error(), "5 is odd; pass an even number");
}

// Why: a Result made from an ok Status would be neither a value nor an error.
TEST(ResultTest, AnOkStatusWithoutAValueIsAnError) {
  const Result<std::string> odd = OkStatus();
  EXPECT_FALSE(odd.ok());
  EXPECT_FALSE(odd.error().empty());
}

}  // namespace
}  // namespace trtwatch
