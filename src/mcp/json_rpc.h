// JSON-RPC 2.0 as MCP uses it: one message per JSON text (no batches since MCP
// 2025-06-18), ids that are strings or integers (never null), params an object.
//
// Threading: pure functions over values.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace trtwatch::mcp {

using nlohmann::json;

namespace rpc_error {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
}  // namespace rpc_error

struct Message {
  enum class Kind { kRequest, kNotification, kResponse, kInvalid };
  Kind kind = Kind::kInvalid;
  json id;             // requests and responses (string or integer); null otherwise
  std::string method;  // requests and notifications
  json params = json::object();
  // kInvalid: the error response to send (id null when the id could not be read).
  json error_response;
};

// Classifies one received message text. Never throws; anything that is not a valid
// message comes back as kInvalid with the JSON-RPC error to answer it with.
Message ParseMessage(std::string_view text);

json ResultResponse(const json& id, json result);
json ErrorResponse(const json& id, int code, std::string message);
json NotificationMessage(std::string method, json params);

// A key for an id in maps: ids 1 and "1" are different requests.
std::string IdKey(const json& id);

}  // namespace trtwatch::mcp
