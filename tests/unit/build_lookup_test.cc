// history::FindBuild: a build of the history by its id or a unique prefix, as `trtwatch
// compare` and `trtwatch replay --build` take them; an unknown or ambiguous id says what
// to do.
#include "history/build_lookup.h"

#include <gtest/gtest.h>

namespace trtwatch::history {
namespace {

std::vector<HistoryEntry> Entries(std::initializer_list<const char*> ids) {
  std::vector<HistoryEntry> entries;
  for (const char* id : ids) {
    HistoryEntry entry;
    entry.build = id;
    entries.push_back(entry);
  }
  return entries;
}

TEST(BuildLookupTest, AnIdOrAUniquePrefixFindsTheBuild) {
  const std::vector<HistoryEntry> entries = Entries({"b_12ab", "b_12cd", "b_99"});
  EXPECT_EQ(FindBuild(entries, "b_12cd", "h.jsonl").entry, &entries[1]);
  EXPECT_EQ(FindBuild(entries, "b_9", "h.jsonl").entry, &entries[2]);
  EXPECT_TRUE(FindBuild(entries, "b_9", "h.jsonl").error.empty());
}

TEST(BuildLookupTest, AnExactIdWinsOverLongerOnes) {
  const std::vector<HistoryEntry> entries = Entries({"b_12", "b_123"});
  EXPECT_EQ(FindBuild(entries, "b_12", "h.jsonl").entry, &entries[0]);
}

TEST(BuildLookupTest, AnUnknownOrAmbiguousIdSaysWhatToDo) {
  const std::vector<HistoryEntry> entries = Entries({"b_12ab", "b_12cd"});
  const FoundBuild unknown = FindBuild(entries, "b_77", "/tmp/h/history.jsonl");
  EXPECT_EQ(unknown.entry, nullptr);
  EXPECT_EQ(unknown.error, "no build \"b_77\" in /tmp/h/history.jsonl (`trtwatch history` lists them)");
  const FoundBuild ambiguous = FindBuild(entries, "b_12", "h.jsonl");
  EXPECT_EQ(ambiguous.entry, nullptr);
  EXPECT_EQ(ambiguous.error, "\"b_12\" starts 2 build ids: give more of it");
  EXPECT_EQ(FindBuild(entries, "", "h.jsonl").entry, nullptr);
}

}  // namespace
}  // namespace trtwatch::history
