#include "runner/history_folder.h"

#include "platform/state_folder.h"

namespace trtwatch {

HistoryFolder ChooseHistoryFolder(const std::string& flag, bool no_history, const EnvLookup& env) {
  HistoryFolder folder;
  const std::optional<std::string> variable = env("TRTWATCH_HISTORY");
  if (no_history || (flag.empty() && variable && *variable == "off")) {
    folder.outcome = HistoryFolder::Outcome::kOff;
    return folder;
  }
  if (!flag.empty() || (variable && !variable->empty())) {
    folder.outcome = HistoryFolder::Outcome::kFolder;
    folder.path = !flag.empty() ? flag : *variable;
    return folder;
  }
  const StateFolder state = UserStateFolder([&](std::string_view name) { return env(name); });
  if (state.path.empty()) {
    folder.error = state.error;
    return folder;
  }
  folder.outcome = HistoryFolder::Outcome::kFolder;
  folder.path = state.path;
  return folder;
}

}  // namespace trtwatch
