// Which folder holds the build history (docs/history.md): --history DIR, else
// TRTWATCH_HISTORY, else the user's state folder (platform/state_folder.h);
// --no-history (or TRTWATCH_HISTORY=off) turns it off. TRTWATCH_HISTORY_MAX_ENTRIES
// raises (or lowers) the bound of 1000 entries.
//
// Threading: a pure function of its arguments.
#pragma once

#include <cstddef>
#include <string>

#include "runner/output_mode.h"

namespace trtwatch {

struct HistoryFolder {
  enum class Outcome { kFolder, kOff, kUnknown };
  Outcome outcome = Outcome::kUnknown;
  std::string path;   // kFolder
  size_t max_entries = 1000;  // kFolder
  std::string error;  // kUnknown: why no folder could be named, and the fix
};

HistoryFolder ChooseHistoryFolder(const std::string& flag, bool no_history, const EnvLookup& env);

}  // namespace trtwatch
