// The parts of handling an HTTP request that need no socket and no service state: the
// request target's path and query, build ids, the bearer token, the browser check.
// server.cc routes with them; fuzz/http_request_fuzz.cc drives them with hostile bytes.
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trtwatch::service {

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Percent-decodes a query key or value ('+' is a space, as forms send it). Returns
// false for a '%' not followed by two hex digits.
bool PercentDecode(std::string_view in, std::string* out);

// "a/b/" -> {"a", "b", ""}: every separator counts.
std::vector<std::string_view> Split(std::string_view s, char sep);

// A whole decimal integer (sign allowed), nothing else.
bool ParseInt(std::string_view s, int64_t* out);

// "b_" and 32 lowercase hex digits.
bool ValidBuildId(std::string_view id);

// Which endpoint a request path names (methods are checked by the handler). The id of
// a build path is not checked here: the handlers answer a bad one with their own 404.
enum class Endpoint {
  kHealth,
  kMetrics,
  kOpenApi,
  kMcp,
  kBuilds,
  kBuildChanges,
  kBuild,
  kBuildCancel,
  kBuildEvents,
  kBuildTrace,
  kNotFound
};
struct Route {
  Endpoint endpoint = Endpoint::kNotFound;
  std::string_view id;  // kBuild, kBuildCancel, kBuildEvents, kBuildTrace: the path's id segment
};
Route RouteOf(std::string_view path);

// The query's key=value pairs (after '?'), percent-decoded, in order. On bad encoding
// returns false with `*error` naming the pair and the fix.
bool ParseQuery(std::string_view target, std::vector<std::pair<std::string, std::string>>* pairs,
                std::string* error);

// The query of GET /builds: status=a,b&limit=N&cursor=C.
struct ListQuery {
  std::vector<std::string> statuses;  // empty: all
  int64_t limit = 20;
  int64_t cursor = 0;  // 0: the first page
};
// Parses the query part of `target` (after '?'; none: the defaults). On a bad query
// returns false with `*error` naming the problem and the fix.
bool ParseListQuery(std::string_view target, ListQuery* query, std::string* error);

// The query of GET /builds/{id}/events: cancel_on_disconnect=true|false and nothing
// else. On a bad query returns false with `*error` naming the known parameter.
bool ParseEventsQuery(std::string_view target, bool* cancel_on_disconnect, std::string* error);

// The token of an "Authorization: Bearer TOKEN" value (the scheme is case-insensitive,
// then one or more spaces); nullopt for any other value.
std::optional<std::string_view> BearerToken(std::string_view authorization);

}  // namespace trtwatch::service
