#include "runner/duration.h"

#include <gtest/gtest.h>

namespace trtwatch {
namespace {

TEST(DurationTest, AcceptsTheFormsOfCoreutilsTimeout) {
  const std::pair<const char*, double> cases[] = {
      {"90", 90}, {"45s", 45}, {"1.5m", 90}, {"2h", 7200}, {"500ms", 0.5}, {"1d", 86400}, {"0.25", 0.25}};
  for (const auto& [text, expected] : cases) {
    double seconds = 0;
    std::string error;
    ASSERT_TRUE(ParseDuration(text, &seconds, &error)) << text << ": " << error;
    EXPECT_DOUBLE_EQ(seconds, expected) << text;
  }
}

TEST(DurationTest, RejectsWithAMessageNamingTheProblem) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty"}, {"abc", "number"}, {"5 minutes", "unit"}, {"3y", "unit"}, {"0", "greater than zero"},
      {"-4s", "greater than zero"},
      // Found by fuzz/duration_fuzz: finite numbers whose scaled value is not.
      {"1e308h", "at most 365d"}, {"1e-320ms", "greater than zero"}, {"366d", "at most 365d"}};
  for (const auto& [text, problem] : cases) {
    double seconds = 0;
    std::string error;
    EXPECT_FALSE(ParseDuration(text, &seconds, &error)) << text;
    EXPECT_NE(error.find(problem), std::string::npos) << error;
    EXPECT_NE(error.find("1.5m"), std::string::npos) << "shows valid forms: " << error;
  }
}

TEST(DurationTest, FormatsInTheLargestExactUnitAndReadsBack) {
  const std::pair<double, const char*> cases[] = {{7200, "2h"}, {90, "90s"}, {0.5, "500ms"}, {86400, "1d"},
                                                  {120, "2m"},  {1.25, "1250ms"}, {5400, "90m"}};
  for (const auto& [seconds, expected] : cases) {
    EXPECT_EQ(DurationText(seconds), expected) << seconds;
    double back = 0;
    std::string error;
    ASSERT_TRUE(ParseDuration(DurationText(seconds), &back, &error)) << error;
    EXPECT_DOUBLE_EQ(back, seconds);
  }
}

}  // namespace
}  // namespace trtwatch
