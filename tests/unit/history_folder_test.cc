// Which history folder and bound a build uses (runner/history_folder.h): the flag, then
// TRTWATCH_HISTORY; TRTWATCH_HISTORY_MAX_ENTRIES raises the bound, and a value that is
// not a count names itself and the fix.
#include "runner/history_folder.h"

#include <gtest/gtest.h>

#include <map>

#include "support/env_map.h"

namespace trtwatch {
namespace {

using testing::EnvOf;

TEST(HistoryFolderTest, TheBoundIsAThousandUnlessTheVariableRaisesIt) {
  EXPECT_EQ(ChooseHistoryFolder("/h", false, EnvOf({})).max_entries, 1000u);
  const HistoryFolder raised = ChooseHistoryFolder("/h", false, EnvOf({{"TRTWATCH_HISTORY_MAX_ENTRIES", "10000"}}));
  EXPECT_EQ(raised.outcome, HistoryFolder::Outcome::kFolder);
  EXPECT_EQ(raised.path, "/h");
  EXPECT_EQ(raised.max_entries, 10000u);
}

TEST(HistoryFolderTest, ABoundThatIsNotACountIsAnErrorNamingTheFix) {
  for (const char* bad : {"0", "ten", "12x", "-5", "1000001"}) {
    const HistoryFolder folder = ChooseHistoryFolder("/h", false, EnvOf({{"TRTWATCH_HISTORY_MAX_ENTRIES", bad}}));
    EXPECT_EQ(folder.outcome, HistoryFolder::Outcome::kUnknown) << bad;
    EXPECT_NE(folder.error.find(std::string("TRTWATCH_HISTORY_MAX_ENTRIES=") + bad), std::string::npos) << folder.error;
    EXPECT_NE(folder.error.find("whole number from 1 to 1000000"), std::string::npos) << folder.error;
  }
}

TEST(HistoryFolderTest, NoHistoryWinsOverTheBound) {
  const HistoryFolder off = ChooseHistoryFolder("", true, EnvOf({{"TRTWATCH_HISTORY_MAX_ENTRIES", "0"}}));
  EXPECT_EQ(off.outcome, HistoryFolder::Outcome::kOff);
}

}  // namespace
}  // namespace trtwatch
