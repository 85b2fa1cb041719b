#include "mcp/json_rpc.h"

#include "protocol/json_body.h"

namespace trtwatch::mcp {

namespace {

Message Invalid(json id, int code, std::string message) {
  Message m;
  m.kind = Message::Kind::kInvalid;
  m.error_response = ErrorResponse(id, code, std::move(message));
  return m;
}

bool ValidId(const json& id) { return id.is_string() || id.is_number_integer(); }

}  // namespace

Message ParseMessage(std::string_view text) {
  JsonBody body = ParseJsonBody(text);
  if (body.outcome == JsonBody::Outcome::kDuplicateKey) {
    return Invalid(nullptr, rpc_error::kInvalidRequest, "invalid request: " + body.error);
  }
  json j = std::move(body.value);
  if (body.outcome != JsonBody::Outcome::kOk) {
    return Invalid(nullptr, rpc_error::kParseError, "parse error: the message is not valid JSON (send one JSON-RPC 2.0 object per line)");
  }
  if (j.is_array()) {
    return Invalid(nullptr, rpc_error::kInvalidRequest,
                   "invalid request: batches are not supported (MCP 2025-06-18 and later); send one message at a time");
  }
  if (!j.is_object()) return Invalid(nullptr, rpc_error::kInvalidRequest, "invalid request: a message must be a JSON object");
  const json id = j.contains("id") ? j["id"] : json();
  const bool has_id = j.contains("id");
  const json id_for_error = has_id && ValidId(id) ? id : json();
  auto version = j.find("jsonrpc");
  if (version == j.end() || *version != "2.0") {
    return Invalid(id_for_error, rpc_error::kInvalidRequest, "invalid request: \"jsonrpc\" must be \"2.0\"");
  }
  if (has_id && !ValidId(id)) {
    return Invalid(nullptr, rpc_error::kInvalidRequest, "invalid request: \"id\" must be a string or an integer");
  }
  if (!j.contains("method")) {
    if (has_id && (j.contains("result") || j.contains("error"))) {
      Message m;
      m.kind = Message::Kind::kResponse;
      m.id = id;
      return m;
    }
    return Invalid(id_for_error, rpc_error::kInvalidRequest, "invalid request: \"method\" is missing");
  }
  if (!j["method"].is_string()) {
    return Invalid(id_for_error, rpc_error::kInvalidRequest, "invalid request: \"method\" must be a string");
  }
  Message m;
  m.method = j["method"].get<std::string>();
  if (j.contains("params")) {
    if (!j["params"].is_object()) {
      return Invalid(id_for_error, rpc_error::kInvalidParams, "invalid params: \"params\" must be an object");
    }
    m.params = std::move(j["params"]);
  }
  m.kind = has_id ? Message::Kind::kRequest : Message::Kind::kNotification;
  m.id = id;
  return m;
}

json ResultResponse(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json ErrorResponse(const json& id, int code, std::string message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", std::move(message)}}}};
}

json NotificationMessage(std::string method, json params) {
  return {{"jsonrpc", "2.0"}, {"method", std::move(method)}, {"params", std::move(params)}};
}

std::string IdKey(const json& id) { return id.dump(); }

}  // namespace trtwatch::mcp
