// One GET to a running `trtwatch serve` for the command line (`trtwatch history|report|
// compare --service URL`): plain HTTP/1.1 over Boost.Beast, a bearer token from a
// --token-file (read as `serve` reads its own), bounded in time and size.
//
// Threading: blocks the calling thread; no state is shared.
#pragma once

#include <string>

namespace trtwatch::app {

struct ServiceAnswer {
  enum class Outcome { kAnswered, kUnreachable, kBadOption };
  Outcome outcome = Outcome::kUnreachable;
  int status = 0;     // kAnswered: the HTTP status
  std::string body;   // kAnswered: the body (at most kMaxServiceBody)
  std::string error;  // otherwise: what went wrong and the fix
};

inline constexpr size_t kMaxServiceBody = 64u << 20;

// GET `target` ("/history?model=x") from `url` ("http://host:port", no path).
ServiceAnswer GetFromService(const std::string& url, const std::string& target, const std::string& token_file);

}  // namespace trtwatch::app
