#include "runner/history_folder.h"

#include <charconv>

#include "platform/state_folder.h"

namespace trtwatch {

namespace {

constexpr size_t kMostEntries = 1000000;

// TRTWATCH_HISTORY_MAX_ENTRIES: unset, or a whole number from 1 to kMostEntries.
bool ReadMaxEntries(const EnvLookup& env, HistoryFolder* folder) {
  const std::optional<std::string> value = env("TRTWATCH_HISTORY_MAX_ENTRIES");
  if (!value || value->empty()) return true;
  size_t parsed = 0;
  const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), parsed);
  if (ec != std::errc() || end != value->data() + value->size() || parsed == 0 || parsed > kMostEntries) {
    folder->error = "TRTWATCH_HISTORY_MAX_ENTRIES=" + *value + " is not a number of entries: give a whole number from 1 to " +
                    std::to_string(kMostEntries) + ", or unset it for 1000";
    return false;
  }
  folder->max_entries = parsed;
  return true;
}

}  // namespace

HistoryFolder ChooseHistoryFolder(const std::string& flag, bool no_history, const EnvLookup& env) {
  HistoryFolder folder;
  const std::optional<std::string> variable = env("TRTWATCH_HISTORY");
  if (no_history || (flag.empty() && variable && *variable == "off")) {
    folder.outcome = HistoryFolder::Outcome::kOff;
    return folder;
  }
  if (!ReadMaxEntries(env, &folder)) return folder;
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
