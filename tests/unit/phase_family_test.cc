// The metrics family of a phase name (history/phase_family.h).
#include "history/phase_family.h"

#include <gtest/gtest.h>

#include <string>

#include "protocol/utf8.h"

namespace trtwatch::history {
namespace {

TEST(PhaseFamilyTest, FoldsEveryRunOfDigitsIntoN) {
  EXPECT_EQ(PhaseFamily("Building layer 12 of 480"), "Building layer N of N");
  EXPECT_EQ(PhaseFamily("Building layer 13 of 480"), PhaseFamily("Building layer 7 of 9"));
  EXPECT_EQ(PhaseFamily("Tactic 3"), "Tactic N");
  EXPECT_EQ(PhaseFamily("Layer[17]"), "Layer[N]");
  EXPECT_EQ(PhaseFamily("v1.2.30-rc4"), "vN.N.N-rcN");
  EXPECT_EQ(PhaseFamily("2024"), "N");
}

TEST(PhaseFamilyTest, KeepsNamesWithoutDigitsAsTheyAre) {
  EXPECT_EQ(PhaseFamily("Building engine"), "Building engine");
  EXPECT_EQ(PhaseFamily("Évaluation des tactiques"), "Évaluation des tactiques");
  EXPECT_EQ(PhaseFamily("say \"hi\"\\\n"), "say \"hi\"\\\n");  // escaping is the renderer's
  EXPECT_EQ(PhaseFamily(""), "");
}

TEST(PhaseFamilyTest, MakesTheNameValidUtf8) {
  EXPECT_EQ(PhaseFamily("node \xC3 7"), "node \xEF\xBF\xBD N");
  const std::string family = PhaseFamily("\xFF\xFE 12");
  EXPECT_EQ(ValidUtf8(family), family);
}

TEST(PhaseFamilyTest, CutsLongNamesOnACharacterBoundary) {
  const std::string exact(kMaxPhaseFamilyBytes, 'a');
  EXPECT_EQ(PhaseFamily(exact), exact);
  EXPECT_EQ(PhaseFamily(exact + "b"), exact + "\xE2\x80\xA6");
  // A two-byte character across the limit is left out whole.
  const std::string cut = std::string(kMaxPhaseFamilyBytes - 1, 'a') + "\xC3\xA9" + "tail";
  const std::string family = PhaseFamily(cut);
  EXPECT_EQ(family, std::string(kMaxPhaseFamilyBytes - 1, 'a') + "\xE2\x80\xA6");
  EXPECT_EQ(ValidUtf8(family), family);
  // Digits are folded before the cut: a long run counts as one "N".
  EXPECT_EQ(PhaseFamily("Layer " + std::string(500, '7')), "Layer N");
}

}  // namespace
}  // namespace trtwatch::history
