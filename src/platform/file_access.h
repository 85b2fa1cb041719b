// Path checks for validating options before anything starts: what a path names and
// whether this process may read or write it (nothing is opened or created); and the
// service's private folders.
//
// Threading: every function is safe from any thread. Platform implementation:
// platform/<os>/file_access.cc (paths are UTF-8 on every platform).
#pragma once

#include <string>

namespace trtwatch {

enum class PathKind { kMissing, kFile, kFolder, kOther };

struct PathStatus {
  PathKind kind = PathKind::kMissing;
  bool not_found = false;  // kMissing because nothing is there (not, say, a permission problem)
  std::string error;       // why it could not be looked at (kMissing), the system's words
};

PathStatus InspectPath(const std::string& path);

enum class Access { kRead, kWrite };

// Whether this process may read the file / write in the folder `path`; false with the
// system's reason in `*error`.
bool CanAccess(const std::string& path, Access access, std::string* error);

// Creates the folder `path` for this user only (mode 0700 from the start on POSIX;
// the inherited ACL on Windows), unless something is there already. False with the
// system's reason in `*error` if there is no folder there afterwards.
bool MakePrivateFolder(const std::string& path, std::string* error);

struct PrivacyResult {
  enum class Outcome { kPrivate, kFailed };
  Outcome outcome = Outcome::kFailed;
  std::string error;  // kFailed: the system's reason
};

// Narrows the existing file or folder `path` to this user only: mode 0600 (a file) or
// 0700 (a folder) on POSIX, whatever the umask made it; on Windows it keeps its
// inherited ACL.
PrivacyResult KeepPrivate(const std::string& path);

}  // namespace trtwatch
