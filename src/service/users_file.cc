#include "service/users_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace trtwatch::service {

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxLine = 256;

std::string_view Trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The line's fields, split on spaces and tabs.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  while (!(line = Trimmed(line)).empty()) {
    const size_t end = line.find_first_of(" \t");
    fields.push_back(line.substr(0, end));
    line = end == std::string_view::npos ? std::string_view() : line.substr(end);
  }
  return fields;
}

bool IsLowerHexDigest(std::string_view hex) {
  if (hex.size() != 64) return false;
  for (char c : hex) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// One non-comment line as a user, or what is wrong with it (without the place).
Result<User> ParseLine(std::string_view line) {
  const std::vector<std::string_view> fields = Fields(line);
  if (fields.size() != 3) {
    return Status::Error("expected 3 fields, NAME ROLE SHA256HEX, found " + std::to_string(fields.size()) +
                         "; add users with `trtwatch user add NAME --role ROLE --users FILE`");
  }
  User user;
  user.name = std::string(fields[0]);
  if (!ValidUserName(user.name)) {
    return Status::Error("the name \"" + user.name.substr(0, kMaxUserName) +
                         "\" is not 1-64 characters of A-Z a-z 0-9 . _ @ -");
  }
  const std::optional<Role> role = ParseRole(fields[1]);
  if (!role) return Status::Error("the role \"" + std::string(fields[1]) + "\" is none of viewer, builder, admin");
  user.role = *role;
  if (fields[2] != "-") {
    if (!IsLowerHexDigest(fields[2])) {
      return Status::Error("the token digest must be 64 lowercase hex digits (the SHA-256 of the token) or - for "
                           "a proxy-only user");
    }
    user.token_digest = DigestFromHex(fields[2]);
  }
  return user;
}

}  // namespace

bool ValidUserName(std::string_view name) {
  if (name.empty() || name.size() > kMaxUserName) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '@' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<Users> Users::Parse(std::string_view text, std::string_view path) {
  Users users;
  size_t number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const std::string place = std::string(path) + ":" + std::to_string(++number) + ": ";
    if (number > kMaxUsers) return Status::Error(place + "more than 10000 lines; a users file lists people");
    if (line.size() > kMaxLine) return Status::Error(place + "longer than 256 bytes; one user a line");
    const std::string_view trimmed = Trimmed(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    Result<User> user = ParseLine(trimmed);
    if (!user.ok()) return Status::Error(place + user.error());
    if (Status added = users.Add(std::move(user).value()); !added.ok()) return Status::Error(place + added.error());
  }
  return users;
}

Status Users::Add(User user) {
  if (by_name_.count(user.name)) {
    return Status::Error("the user \"" + user.name + "\" is listed twice; keep one line per user");
  }
  if (user.token_digest) {
    const std::string hex = HexOf(*user.token_digest);
    if (by_digest_.count(hex)) {
      return Status::Error("\"" + user.name + "\" has the token of \"" + users_[by_digest_[hex]].name +
                           "\"; give each user a token of their own (trtwatch user add)");
    }
    by_digest_.emplace(hex, users_.size());
  }
  by_name_.emplace(user.name, users_.size());
  users_.push_back(std::move(user));
  return OkStatus();
}

const User* Users::ByToken(std::string_view token) const {
  auto it = by_digest_.find(HexOf(Sha256Of(token)));
  return it == by_digest_.end() ? nullptr : &users_[it->second];
}

const User* Users::ByName(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : &users_[it->second];
}

std::string UsersFileLine(const User& user) {
  return user.name + " " + std::string(RoleName(user.role)) + " " +
         (user.token_digest ? HexOf(*user.token_digest) : std::string("-")) + "\n";
}

Result<Users> ReadUsersFile(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    return Status::Error("cannot read --users \"" + path + "\": " + (ec ? ec.message() : "no such file") +
                         "; create it with `trtwatch user add NAME --role ROLE --users " + path + "`");
  }
  if (!fs::is_regular_file(st)) return Status::Error("--users \"" + path + "\" is not a regular file");
  if ((st.permissions() & (fs::perms::group_write | fs::perms::others_write)) != fs::perms::none) {
    return Status::Error("--users \"" + path + "\" is writable by other users, who could make themselves admin; run: "
                         "chmod go-w " + path);
  }
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > (kMaxLine + 1) * kMaxUsers) {
    return Status::Error("--users \"" + path + "\" is over 2.5 MB; it lists at most 10000 users");
  }
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Status::Error("cannot read --users \"" + path + "\"");
  text.resize(static_cast<size_t>(in.gcount()));
  return Users::Parse(text, path);
}

Result<UsersSource> UsersSource::Open(std::string path, std::string token) {
  UsersSource source(std::move(path), std::move(token));
  source.required_ = !source.path_.empty() || !source.token_.empty();
  if (Status loaded = source.Load(); !loaded.ok()) return loaded;
  return source;
}

Status UsersSource::Load() {
  Users users;
  if (!path_.empty()) {
    std::error_code ec;
    const fs::file_time_type mtime = fs::last_write_time(path_, ec);
    Result<Users> read = ReadUsersFile(path_);
    if (!read.ok()) return read.status();
    users = std::move(read).value();
    mtime_ = ec ? 0 : static_cast<long long>(mtime.time_since_epoch().count());
  }
  if (!token_.empty()) {
    if (users.ByName(kTokenFileUser)) {
      return Status::Error("--users \"" + path_ + "\" names a user \"" + std::string(kTokenFileUser) +
                           "\", the name --token-file's token signs in as; rename that user or drop --token-file");
    }
    if (Status added = users.Add(User{std::string(kTokenFileUser), Role::kAdmin, Sha256Of(token_)}); !added.ok()) {
      return Status::Error("--token-file's token: " + added.error());
    }
  }
  users_ = std::move(users);
  return OkStatus();
}

const Users& UsersSource::Current(double now) {
  if (path_.empty() || (checked_at_ >= 0 && now - checked_at_ < 1.0)) return users_;
  checked_at_ = now;
  std::error_code ec;
  const fs::file_time_type mtime = fs::last_write_time(path_, ec);
  const long long stamp = ec ? 0 : static_cast<long long>(mtime.time_since_epoch().count());
  if (mtime_ && *mtime_ == stamp) return users_;
  if (Status loaded = Load(); !loaded.ok()) {
    mtime_ = stamp;  // said once per change of the file
    if (loaded.error() != last_error_) std::fprintf(stderr, "trtwatch serve: users file not re-read: %s\n", loaded.error().c_str());
    last_error_ = loaded.error();
  } else {
    last_error_.clear();
    std::fprintf(stderr, "trtwatch serve: re-read the users file %s (%zu users)\n", path_.c_str(), users_.all().size());
  }
  return users_;
}

}  // namespace trtwatch::service
