#include "platform/file_access.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trtwatch {

PathStatus InspectPath(const std::string& path) {
  PathStatus status;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    status.not_found = err == ENOENT;
    status.error = std::strerror(err);
    return status;
  }
  status.kind = S_ISDIR(st.st_mode) ? PathKind::kFolder : S_ISREG(st.st_mode) ? PathKind::kFile : PathKind::kOther;
  return status;
}

bool CanAccess(const std::string& path, Access access, std::string* error) {
  if (::access(path.c_str(), access == Access::kRead ? R_OK : W_OK) == 0) return true;
  *error = std::strerror(errno);
  return false;
}

bool MakePrivateFolder(const std::string& path, std::string* error) {
  if (::mkdir(path.c_str(), 0700) == 0) return true;
  const int err = errno;
  if (err == EEXIST && InspectPath(path).kind == PathKind::kFolder) return true;
  *error = std::strerror(err);
  return false;
}

PrivacyResult KeepPrivate(const std::string& path) {
  PrivacyResult result;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || ::chmod(path.c_str(), S_ISDIR(st.st_mode) ? 0700 : 0600) != 0) {
    result.error = std::strerror(errno);
    return result;
  }
  result.outcome = PrivacyResult::Outcome::kPrivate;
  return result;
}

}  // namespace trtwatch
