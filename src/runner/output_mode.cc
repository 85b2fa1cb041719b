#include "runner/output_mode.h"

#include <cstdlib>

#include "platform/terminal.h"

namespace trtwatch {

namespace {

bool NonEmpty(const EnvLookup& env, std::string_view name) {
  const std::optional<std::string> value = env(name);
  return value && !value->empty();
}

// CI=true, CI=1, TF_BUILD=True...: set and not an explicit "false"/"0".
bool UnderCi(const EnvLookup& env) {
  for (std::string_view name : {"CI", "TF_BUILD"}) {
    const std::optional<std::string> value = env(name);
    if (value && !value->empty() && *value != "0" && *value != "false" && *value != "False") return true;
  }
  return false;
}

bool ForcingColour(const EnvLookup& env) {
  for (std::string_view name : {"CLICOLOR_FORCE", "FORCE_COLOR"}) {
    const std::optional<std::string> value = env(name);
    if (value && !value->empty() && *value != "0") return true;
  }
  return false;
}

bool Utf8Locale(const EnvLookup& env) {
  for (std::string_view name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const std::optional<std::string> value = env(name);
    if (!value || value->empty()) continue;
    std::string lower;
    for (char c : *value) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return lower.find("utf-8") != std::string::npos || lower.find("utf8") != std::string::npos;
  }
  return false;
}

bool ParseProgress(std::string_view text, std::optional<ProgressMode>* mode) {
  if (text == "auto") {
    mode->reset();
  } else if (text == "tty") {
    *mode = ProgressMode::kTty;
  } else if (text == "plain") {
    *mode = ProgressMode::kPlain;
  } else if (text == "json") {
    *mode = ProgressMode::kJson;
  } else if (text == "quiet") {
    *mode = ProgressMode::kQuiet;
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::string_view ProgressModeName(ProgressMode mode) {
  switch (mode) {
    case ProgressMode::kTty: return "tty";
    case ProgressMode::kPlain: return "plain";
    case ProgressMode::kJson: return "json";
    case ProgressMode::kQuiet: return "quiet";
  }
  return "plain";
}

std::optional<OutputMode> ResolveOutputMode(const OutputFlags& flags, const EnvLookup& env,
                                            bool stderr_is_terminal, std::string* error) {
  std::optional<ProgressMode> chosen;
  std::string source = "--progress " + flags.progress;
  if (!ParseProgress(flags.progress, &chosen)) {
    *error = "--progress must be one of auto, tty, plain, json, quiet (got \"" + flags.progress + "\")";
    return std::nullopt;
  }
  if (!chosen) {
    const std::optional<std::string> variable = env("TRTWATCH_PROGRESS");
    if (variable && !variable->empty()) {
      if (!ParseProgress(*variable, &chosen)) {
        *error = "TRTWATCH_PROGRESS must be one of auto, tty, plain, json, quiet (got \"" + *variable +
                 "\"); fix or unset it, or pass --progress";
        return std::nullopt;
      }
      source = "TRTWATCH_PROGRESS=" + *variable;
    }
  }

  const std::optional<std::string> term = env("TERM");
  const bool term_says_smart = term ? !term->empty() && *term != "dumb" : !TerminalNeedsTermVariable();
  const bool smart_terminal = stderr_is_terminal && term_says_smart;
  OutputMode mode;
  if (chosen) {
    if (*chosen == ProgressMode::kTty && !stderr_is_terminal) {
      *error = source + " needs stderr to be a terminal, and it is not (a pipe or a file?); use --progress "
               "plain for logs, or --progress auto to choose by itself";
      return std::nullopt;
    }
    mode.progress = *chosen;
  } else {
    mode.progress = smart_terminal && !UnderCi(env) ? ProgressMode::kTty : ProgressMode::kPlain;
  }

  if (flags.color == "always") {
    mode.color = true;
  } else if (flags.color == "never") {
    mode.color = false;
  } else if (flags.color == "auto") {
    if (NonEmpty(env, "NO_COLOR")) {
      mode.color = false;
    } else if (ForcingColour(env)) {
      mode.color = true;
    } else {
      mode.color = smart_terminal;
    }
  } else {
    *error = "--color must be one of auto, always, never (got \"" + flags.color + "\")";
    return std::nullopt;
  }
  mode.unicode = Utf8Locale(env) || (mode.progress == ProgressMode::kTty && TerminalTakesUtf8());
  // Only the tty view draws colour; the plain, json and quiet outputs stay escape-free.
  if (mode.progress != ProgressMode::kTty) mode.color = false;
  return mode;
}

EnvLookup ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

}  // namespace trtwatch
