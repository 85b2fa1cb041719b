// The service's users: `--users FILE`, one user a line, `NAME ROLE SHA256HEX`:
//   NAME      1-64 characters of A-Z a-z 0-9 . _ @ -
//   ROLE      viewer | builder | admin (service/roles.h)
//   SHA256HEX the SHA-256 of the user's bearer token, 64 lowercase hex digits; `-` for
//             a user who signs in only through a trusted proxy (no token)
// `#` starts a comment line; blank lines are fine. The file holds no token, only
// digests: a token is checked by hashing what the client presents and looking the
// digest up (`trtwatch user add` makes tokens of 256 random bits, so an unsalted hash
// is enough). `--token-file`'s token joins as one admin named kTokenFileUser.
//
// Threading: a Users is a value; UsersSource is owned by the event-loop thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "platform/sha256.h"
#include "service/roles.h"

namespace trtwatch::service {

// The user --token-file's token signs in as (an admin).
inline constexpr std::string_view kTokenFileUser = "admin";
inline constexpr size_t kMaxUserName = 64;
inline constexpr size_t kMaxUsers = 10000;  // lines of a users file read at most

struct User {
  std::string name;
  Role role = Role::kViewer;
  std::optional<Sha256Digest> token_digest;  // none: signs in through the trusted proxy only
};

// Whether `name` follows the name rule above.
bool ValidUserName(std::string_view name);

class Users {
 public:
  // The file's text; errors name `path`:LINE and the fix.
  [[nodiscard]] static Result<Users> Parse(std::string_view text, std::string_view path);
  // Refused: a name already there, a token digest already there.
  [[nodiscard]] Status Add(User user);

  // The user whose token digest is the SHA-256 of `token`, or nullptr.
  const User* ByToken(std::string_view token) const;
  const User* ByName(std::string_view name) const;
  const std::vector<User>& all() const { return users_; }
  bool empty() const { return users_.empty(); }

 private:
  std::vector<User> users_;
  std::unordered_map<std::string, size_t> by_name_;
  std::unordered_map<std::string, size_t> by_digest_;  // hex digest -> index
};

// One line of the file for `user`, with its newline.
std::string UsersFileLine(const User& user);

// Reads and parses the file: a regular file, not writable by group or others, at most
// kMaxUsers lines of 256 bytes.
[[nodiscard]] Result<Users> ReadUsersFile(const std::string& path);

// The users a service checks: the users file (when given) plus --token-file's admin,
// re-read when the file's modification time changes, at most once a second.
class UsersSource {
 public:
  // Reads the file (unless `path` is empty) and adds the token's admin (unless `token`
  // is empty); an error refuses the start (a bad line, a clash with kTokenFileUser).
  [[nodiscard]] static Result<UsersSource> Open(std::string path, std::string token);

  // Whether credentials are asked for at all (a users file or a token file).
  bool required() const { return required_; }
  // The users now, after a re-read if the file changed since the last look (`now`:
  // monotonic seconds). A file that became bad keeps the users it had, and says why
  // once on stderr.
  const Users& Current(double now);

 private:
  UsersSource(std::string path, std::string token) : path_(std::move(path)), token_(std::move(token)) {}
  [[nodiscard]] Status Load();

  std::string path_;
  std::string token_;
  bool required_ = false;
  Users users_;
  std::optional<long long> mtime_;  // of the file as last read (nanoseconds)
  double checked_at_ = -1;
  std::string last_error_;
};

}  // namespace trtwatch::service
