// What a route is asked and what it answers, without the wire: the resources' files
// (api_*.h) build an ApiAnswer from an ApiRequest, and only the connection
// (http_api.cc) and http_wire.h know Beast. So a resource's file compiles in a
// fraction of a Beast translation unit's time and tests need no socket.
//
// Threading: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/route.h"

namespace trtwatch::service {

// The methods the API tells apart; HEAD arrives as kGet (the connection drops the body).
enum class Method { kGet, kPost, kPut, kDelete, kOther };

struct ApiRequest {
  Method method = Method::kGet;
  std::string_view target;  // path and query, as sent
  std::string_view path;    // without the query
  std::string_view body;
  std::string_view cookie;  // the Cookie header; empty when absent
  Route route;
  std::string_view want_repr_digest;  // the Want-Repr-Digest header (RFC 9530 §4); empty when absent
  // Who asked: the user's name (the users file, a trusted proxy's identity header, a
  // dashboard sign-in); empty where the service asks for no credentials.
  std::string_view caller;
};

// A whole response: status, header fields in the order set, body.
struct ApiAnswer {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // Sets `name` (replacing a field of that name) as Beast's fields::set does.
  void Set(std::string_view name, std::string value);
};

// application/json, not cached.
[[nodiscard]] ApiAnswer JsonAnswer(int status, std::string body);
// {"error": message}, the message made valid UTF-8 (it quotes the client's bytes).
[[nodiscard]] ApiAnswer ErrorAnswer(int status, const std::string& message);
// Over a cap: an error naming it and the flag that raises it, with Retry-After.
[[nodiscard]] ApiAnswer RetryLater(int status, const std::string& what, int64_t cap, const std::string& flag);
// 405 with Allow.
[[nodiscard]] ApiAnswer MethodNotAllowed(std::string_view allow);
// 404 for a path that names no route.
[[nodiscard]] ApiAnswer NoSuchEndpoint(std::string_view path);

}  // namespace trtwatch::service
