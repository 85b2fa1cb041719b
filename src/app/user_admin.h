// `trtwatch user add|ls|rm`: the service's users file (service/users_file.h) kept by
// hand-free commands. A new user's token is 256 bits from the OS's random source, shown
// once; the file keeps only its SHA-256. The file is created 0600 and never written
// when group or others could write it (they could make themselves admin).
//
// Threading: one call at a time (a command-line run).
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace trtwatch::app {

// Adds NAME with ROLE ("viewer", "builder", "admin") to the file at `path` (created if
// absent) and returns the new token (64 hex digits). Refused: a bad name or role, a
// name already there, a file that is not a users file or is group/other-writable.
[[nodiscard]] Result<std::string> AddUser(const std::string& path, const std::string& name, const std::string& role);
// One user as `trtwatch user ls` shows them.
struct ListedUser {
  std::string name;
  std::string role;         // "viewer", "builder", "admin"
  bool proxy_only = false;  // no token: signs in through a trusted proxy only
};
// The file's users (names and roles; the digests stay in the file).
[[nodiscard]] Result<std::vector<ListedUser>> ListUsers(const std::string& path);
// Removes NAME's line (comments and the other lines stay as they are), atomically.
[[nodiscard]] Status RemoveUser(const std::string& path, const std::string& name);

}  // namespace trtwatch::app
