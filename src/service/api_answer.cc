#include "service/api_answer.h"

#include <nlohmann/json.hpp>

#include "protocol/utf8.h"
#include "service/http_request.h"  // EqualsIgnoreCase

namespace trtwatch::service {

using nlohmann::json;

void ApiAnswer::Set(std::string_view name, std::string value) {
  for (auto& [field, current] : headers) {
    if (EqualsIgnoreCase(field, name)) {
      current = std::move(value);
      return;
    }
  }
  headers.emplace_back(std::string(name), std::move(value));
}

ApiAnswer JsonAnswer(int status, std::string body) {
  ApiAnswer answer{status, {}, std::move(body)};
  answer.Set("Content-Type", "application/json");
  answer.Set("Cache-Control", "no-store");
  return answer;
}

ApiAnswer ErrorAnswer(int status, const std::string& message) {
  return JsonAnswer(status, json{{"error", ValidUtf8(message)}}.dump(-1, ' ', false, json::error_handler_t::replace));
}

ApiAnswer RetryLater(int status, const std::string& what, int64_t cap, const std::string& flag) {
  ApiAnswer answer =
      ErrorAnswer(status, "too many " + what + " (" + std::to_string(cap) + "); retry later or raise " + flag);
  answer.Set("Retry-After", "1");
  return answer;
}

ApiAnswer MethodNotAllowed(std::string_view allow) {
  ApiAnswer answer = ErrorAnswer(405, "method not allowed here; use " + std::string(allow));
  answer.Set("Allow", std::string(allow));
  return answer;
}

ApiAnswer NoSuchEndpoint(std::string_view path) {
  return ErrorAnswer(404, "no such endpoint \"" + std::string(path) + "\"; see GET /openapi.json for the API");
}

}  // namespace trtwatch::service
