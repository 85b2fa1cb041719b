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

}  // namespace trtwatch
