// A build in the history by its id, or a unique prefix of it, as `trtwatch compare`
// and `trtwatch replay --build` take them (docs/history.md).
//
// Threading: a pure function of the entries.
#pragma once

#include <string>
#include <vector>

#include "history/history_entry.h"

namespace trtwatch::history {

struct FoundBuild {
  const HistoryEntry* entry = nullptr;  // into the entries searched
  std::string error;                    // no entry: an unknown or ambiguous id, and what to do
};

// `path` names the history file in the error.
FoundBuild FindBuild(const std::vector<HistoryEntry>& entries, const std::string& id, const std::string& path);

}  // namespace trtwatch::history
