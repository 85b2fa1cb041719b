// Output modes of `trtwatch build`: which progress view and whether to colour it.
//
// A pure decision from the flags, the environment and one fact about the terminal, so
// that every rule (docs/terminal.md) is unit-tested without a terminal:
//  - --progress auto picks tty only for an interactive stderr with TERM set, not
//    "dumb" (on Windows, where consoles set no TERM: not "dumb"), and no CI marker
//    (CI, TF_BUILD); plain otherwise. TRTWATCH_PROGRESS
//    applies only while the flag is auto. A forced tty on a non-terminal is an error.
//  - --color auto colours only the tty view: NO_COLOR (non-empty) turns it off,
//    CLICOLOR_FORCE / FORCE_COLOR (non-empty, not "0") turn it on; --color always|never
//    overrides everything. NO_COLOR wins over the forcing variables.
// Thread-free, allocation only for the error text.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace trtwatch {

enum class ProgressMode { kTty, kPlain, kJson, kQuiet };

std::string_view ProgressModeName(ProgressMode mode);

struct OutputFlags {
  std::string progress = "auto";  // auto|tty|plain|json|quiet
  std::string color = "auto";     // auto|always|never
};

// The environment, as getenv would answer: nullopt for an unset variable.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

struct OutputMode {
  ProgressMode progress = ProgressMode::kPlain;
  bool color = false;   // SGR colours in the tty view
  bool unicode = false;  // the locale is UTF-8 (LC_ALL, else LC_CTYPE, else LANG): bars in UTF-8
};

// Decides the mode. `stderr_is_terminal` is isatty(2). On a usage error returns
// nullopt and sets `*error` to a message naming the problem and the fix.
std::optional<OutputMode> ResolveOutputMode(const OutputFlags& flags, const EnvLookup& env,
                                            bool stderr_is_terminal, std::string* error);

// The process environment (getenv).
EnvLookup ProcessEnvironment();

}  // namespace trtwatch
