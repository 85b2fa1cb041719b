// ParseInto: ParseBuildRequest for tables of test cases that reuse one request and one
// error text across rows (the value on success, the error text on failure).
#pragma once

#include <string>
#include <string_view>

#include "builds/build_request.h"

namespace trtwatch::builds {

inline bool ParseInto(std::string_view body, const RequestPaths& paths, BuildRequest* request, std::string* error) {
  Result<BuildRequest> parsed = ParseBuildRequest(body, paths);
  if (!parsed.ok()) {
    *error = parsed.error();
    return false;
  }
  *request = std::move(parsed).value();
  return true;
}

}  // namespace trtwatch::builds
