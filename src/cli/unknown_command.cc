#include "cli/unknown_command.h"

#include <CLI/CLI.hpp>

namespace trtwatch {

std::string UnknownCommandError(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* level = &app;
  std::string path = "trtwatch";  // not argv[0], which may be any path
  for (const std::string& arg : args) {
    if (arg.empty() || arg.front() == '-') return "";  // an option: CLI11's own error says what was wrong
    const CLI::App* sub = nullptr;
    for (const CLI::App* candidate : level->get_subcommands([](const CLI::App*) { return true; })) {
      if (candidate->check_name(arg)) sub = candidate;
    }
    if (sub) {
      level = sub;
      path += " " + arg;
      continue;
    }
    if (level->get_require_subcommand_min() == 0) return "";  // a positional (a model, a file)
    std::string names;
    for (const CLI::App* candidate : level->get_subcommands([](const CLI::App*) { return true; })) {
      names += (names.empty() ? "" : ", ") + candidate->get_name();
    }
    return "unknown command \"" + arg + "\"; the commands of " + path + " are " + names + " (" + path + " --help)";
  }
  return "";
}

}  // namespace trtwatch
