#include "app/user_admin.h"

#include <cstdio>
#include <filesystem>
#include <random>

#include "platform/atomic_file.h"
#include "platform/sha256.h"
#include "service/roles.h"
#include "service/users_file.h"

namespace trtwatch::app {

namespace {

namespace fs = std::filesystem;

// The file's text and users; an absent file is an empty one when `may_be_absent`.
struct UsersText {
  std::string text;
  service::Users users;
};
Result<UsersText> ReadForChange(const std::string& path, bool may_be_absent) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (may_be_absent) return UsersText{};
    return Status::Error("no users file \"" + path + "\"; make one with `trtwatch user add NAME --role ROLE --users " +
                         path + "`");
  }
  Result<service::Users> users = service::ReadUsersFile(path);  // refuses a group/other-writable file
  if (!users.ok()) return users.status();
  UsersText out;
  std::string error;
  if (!ReadWholeFile(path, &out.text, &error)) return Status::Error(error);
  out.users = std::move(users).value();
  return out;
}

// Replaces the file (temp + rename), owner-only.
Status WriteUsers(const std::string& path, const std::string& text) {
  std::string error;
  if (!WriteFileAtomically(path, text, &error)) return Status::Error("cannot write \"" + path + "\": " + error);
  std::error_code ec;
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace, ec);
  if (ec) return Status::Error("cannot make \"" + path + "\" owner-only (chmod 600): " + ec.message());
  return OkStatus();
}

// 256 bits from the OS's random source (/dev/urandom on Linux), as 64 hex digits.
std::string NewToken() {
  std::random_device os_random;
  std::string token;
  for (int i = 0; i < 8; ++i) {
    char word[9];
    std::snprintf(word, sizeof word, "%08x", static_cast<unsigned>(os_random()));
    token += word;
  }
  return token;
}

}  // namespace

Result<std::string> AddUser(const std::string& path, const std::string& name, const std::string& role) {
  if (!service::ValidUserName(name)) {
    return Status::Error("the name \"" + name + "\" is not 1-64 characters of A-Z a-z 0-9 . _ @ -");
  }
  const std::optional<service::Role> parsed_role = service::ParseRole(role);
  if (!parsed_role) return Status::Error("--role must be viewer, builder or admin (got \"" + role + "\")");
  Result<UsersText> current = ReadForChange(path, /*may_be_absent=*/true);
  if (!current.ok()) return current.status();
  UsersText file = std::move(current).value();
  if (file.users.ByName(name)) {
    return Status::Error("\"" + name + "\" is already in " + path + "; remove them first (trtwatch user rm " + name +
                         " --users " + path + ") to give them a new token");
  }
  const std::string token = NewToken();
  if (!file.text.empty() && file.text.back() != '\n') file.text += '\n';
  file.text += service::UsersFileLine(service::User{name, *parsed_role, Sha256Of(token)});
  if (Status written = WriteUsers(path, file.text); !written.ok()) return written;
  return token;
}

Result<std::vector<ListedUser>> ListUsers(const std::string& path) {
  Result<UsersText> current = ReadForChange(path, /*may_be_absent=*/false);
  if (!current.ok()) return current.status();
  std::vector<ListedUser> listed;
  for (const service::User& user : current->users.all()) {
    listed.push_back({user.name, std::string(service::RoleName(user.role)), !user.token_digest});
  }
  return listed;
}

Status RemoveUser(const std::string& path, const std::string& name) {
  Result<UsersText> current = ReadForChange(path, /*may_be_absent=*/false);
  if (!current.ok()) return current.status();
  if (!current->users.ByName(name)) return Status::Error("no user \"" + name + "\" in " + path);
  std::string kept;
  std::string_view text = current->text;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end == std::string_view::npos ? text.size() : end + 1);
    text.remove_prefix(line.size());
    // The line's first field is the name (the file parsed, so a user line has one).
    const size_t start = line.find_first_not_of(" \t");
    const bool theirs = start != std::string_view::npos && line.substr(start).starts_with(name) &&
                        line.size() > start + name.size() &&
                        (line[start + name.size()] == ' ' || line[start + name.size()] == '\t');
    if (!theirs) kept += line;
  }
  return WriteUsers(path, kept);
}

}  // namespace trtwatch::app
