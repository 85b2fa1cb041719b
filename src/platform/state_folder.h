// The folder where trtwatch keeps a user's own state (the build history,
// docs/history.md): $XDG_STATE_HOME/trtwatch, else ~/.local/state/trtwatch (POSIX, the
// XDG Base Directory rules: a relative XDG_STATE_HOME is ignored); %LOCALAPPDATA%\trtwatch
// (Windows). Nothing is created here.
//
// Threading: a pure function of `env`. Implementations: platform/<os>/state_folder.cc.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace trtwatch {

struct StateFolder {
  std::string path;   // empty when the environment names none
  std::string error;  // then: which variable to set
};

StateFolder UserStateFolder(const std::function<std::optional<std::string>(std::string_view)>& env);

}  // namespace trtwatch
