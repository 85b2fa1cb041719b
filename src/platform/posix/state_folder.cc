#include "platform/state_folder.h"

namespace trtwatch {

StateFolder UserStateFolder(const std::function<std::optional<std::string>(std::string_view)>& env) {
  StateFolder folder;
  const std::optional<std::string> xdg = env("XDG_STATE_HOME");
  if (xdg && !xdg->empty() && xdg->front() == '/') {
    folder.path = *xdg + "/trtwatch";
    return folder;
  }
  const std::optional<std::string> home = env("HOME");
  if (home && !home->empty() && home->front() == '/') {
    folder.path = *home + "/.local/state/trtwatch";
    return folder;
  }
  folder.error = "neither XDG_STATE_HOME nor HOME names an absolute folder: set one, or --history DIR";
  return folder;
}

}  // namespace trtwatch
