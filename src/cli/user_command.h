// `trtwatch user add|ls|rm`: the service's users file (docs/api.md, "Users and roles").
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace trtwatch {

struct UserCommandOptions {
  std::string users_file;  // --users
  std::string name;
  std::string role;  // add: viewer | builder | admin
  CLI::App* add = nullptr;
  CLI::App* ls = nullptr;
  CLI::App* rm = nullptr;
};

CLI::App* AddUserCommand(CLI::App& app, UserCommandOptions* options);
// Exit 0, or 2 with the error on stderr.
int RunUserCommand(const UserCommandOptions& options);

}  // namespace trtwatch
