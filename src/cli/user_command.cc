#include "cli/user_command.h"

#include <cstdio>

#include <trtwatch/result.h>

#include "app/user_admin.h"

namespace trtwatch {

namespace {

int Fail(const std::string& error) {
  std::fprintf(stderr, "trtwatch user: %s\n", error.c_str());
  return exit_code::kUsage;
}

// The token alone on stdout, for a script to capture; the warning on stderr.
int Add(const UserCommandOptions& options) {
  Result<std::string> token = app::AddUser(options.users_file, options.name, options.role);
  if (!token.ok()) return Fail(token.error());
  std::fprintf(stderr,
               "trtwatch user: added %s (%s) to %s. Their token follows; it will not be shown again (the file keeps "
               "only its SHA-256). A running service picks the user up within a second.\n",
               options.name.c_str(), options.role.c_str(), options.users_file.c_str());
  std::printf("%s\n", token.value().c_str());
  return exit_code::kSucceeded;
}

int List(const UserCommandOptions& options) {
  Result<std::vector<app::ListedUser>> users = app::ListUsers(options.users_file);
  if (!users.ok()) return Fail(users.error());
  for (const app::ListedUser& user : users.value()) {
    std::printf("%s %s%s\n", user.name.c_str(), user.role.c_str(), user.proxy_only ? " (proxy sign-in only)" : "");
  }
  return exit_code::kSucceeded;
}

}  // namespace

CLI::App* AddUserCommand(CLI::App& app, UserCommandOptions* options) {
  CLI::App* cmd = app.add_subcommand("user", "Manage the users of `trtwatch serve --users FILE`");
  cmd->require_subcommand(1);
  options->add = cmd->add_subcommand("add", "Add a user with a role; prints their new token once");
  options->add->add_option("name", options->name, "User name: 1-64 of A-Z a-z 0-9 . _ @ -")->required();
  options->add->add_option("--role", options->role, "viewer (read, follow), builder (submit, cancel their own), admin")
      ->required();
  options->ls = cmd->add_subcommand("ls", "List the users and their roles (never the token digests)");
  options->rm = cmd->add_subcommand("rm", "Remove a user; a running service drops them within a second");
  options->rm->add_option("name", options->name, "User name")->required();
  for (CLI::App* sub : {options->add, options->ls, options->rm}) {
    sub->add_option("--users", options->users_file, "The users file (created 0600 by add)")->required();
  }
  return cmd;
}

int RunUserCommand(const UserCommandOptions& options) {
  if (options.add->parsed()) return Add(options);
  if (options.ls->parsed()) return List(options);
  const Status removed = app::RemoveUser(options.users_file, options.name);
  if (!removed.ok()) return Fail(removed.error());
  std::fprintf(stderr, "trtwatch user: removed %s from %s\n", options.name.c_str(), options.users_file.c_str());
  return exit_code::kSucceeded;
}

}  // namespace trtwatch
