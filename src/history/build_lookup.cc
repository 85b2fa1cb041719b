#include "history/build_lookup.h"

namespace trtwatch::history {

FoundBuild FindBuild(const std::vector<HistoryEntry>& entries, const std::string& id, const std::string& path) {
  const HistoryEntry* found = nullptr;
  size_t matches = 0;
  for (const HistoryEntry& entry : entries) {
    if (entry.build == id) return FoundBuild{&entry, ""};
    if (!id.empty() && entry.build.compare(0, id.size(), id) == 0) {
      found = &entry;
      ++matches;
    }
  }
  if (matches == 1) return FoundBuild{found, ""};
  return FoundBuild{nullptr, matches == 0 ? "no build \"" + id + "\" in " + path + " (`trtwatch history` lists them)"
                                          : "\"" + id + "\" starts " + std::to_string(matches) +
                                                " build ids: give more of it"};
}

}  // namespace trtwatch::history
