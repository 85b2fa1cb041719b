#include "platform/file_access.h"

#include <windows.h>

#include "platform/win32/text.h"

namespace trtwatch {

PathStatus InspectPath(const std::string& path) {
  PathStatus status;
  const DWORD attributes = GetFileAttributesW(win32::Widen(path).c_str());
  if (attributes == INVALID_FILE_ATTRIBUTES) {
    const DWORD err = GetLastError();
    status.not_found = err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND;
    status.error = win32::ErrorText(err);
    return status;
  }
  status.kind = (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0 ? PathKind::kFolder
                : (attributes & FILE_ATTRIBUTE_DEVICE) != 0  ? PathKind::kOther
                                                             : PathKind::kFile;
  return status;
}

bool CanAccess(const std::string& path, Access access, std::string* error) {
  // Windows access rights are ACLs: the honest test is to open the path the way it
  // will be used (a folder with FILE_ADD_FILE, a file for reading), then close it.
  const bool folder = access == Access::kWrite;
  const HANDLE handle = CreateFileW(win32::Widen(path).c_str(), folder ? FILE_ADD_FILE : GENERIC_READ,
                                    FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                                    folder ? FILE_FLAG_BACKUP_SEMANTICS : FILE_ATTRIBUTE_NORMAL, nullptr);
  if (handle == INVALID_HANDLE_VALUE) {
    *error = win32::ErrorText(GetLastError());
    return false;
  }
  CloseHandle(handle);
  return true;
}

bool MakePrivateFolder(const std::string& path, std::string* error) {
  if (CreateDirectoryW(win32::Widen(path).c_str(), nullptr)) return true;
  const DWORD err = GetLastError();
  if (err == ERROR_ALREADY_EXISTS && InspectPath(path).kind == PathKind::kFolder) return true;
  *error = win32::ErrorText(err);
  return false;
}

PrivacyResult KeepPrivate(const std::string& path) {
  // The inherited ACL (the user's profile folder's) is kept; only that the path is there is checked.
  PrivacyResult result;
  const PathStatus status = InspectPath(path);
  if (status.kind == PathKind::kMissing) {
    result.error = status.error;
    return result;
  }
  result.outcome = PrivacyResult::Outcome::kPrivate;
  return result;
}

}  // namespace trtwatch
