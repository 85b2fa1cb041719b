#include "platform/state_folder.h"

namespace trtwatch {

StateFolder UserStateFolder(const std::function<std::optional<std::string>(std::string_view)>& env) {
  StateFolder folder;
  const std::optional<std::string> local = env("LOCALAPPDATA");
  if (local && !local->empty()) {
    folder.path = *local + "\\trtwatch";
    return folder;
  }
  folder.error = "LOCALAPPDATA is not set: set it, or --history DIR";
  return folder;
}

}  // namespace trtwatch
