// ParseJsonBody: the one JSON reader of every body a client sends (POST /builds, a
// cancel, an MCP JSON-RPC message), so that each refuses the same inputs.
//
// RFC 8259 §4: "The names within an object SHOULD be unique"; when they are not,
// parsers differ (first wins, last wins, error). A body with a duplicate key is
// refused, naming the key, rather than read one way here and another way by a proxy
// or a log reader.
//
// Threading: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace trtwatch {

struct JsonBody {
  enum class Outcome {
    kOk,            // `value` is the document
    kNotJson,       // not one JSON text (or not valid UTF-8)
    kDuplicateKey,  // valid JSON, but an object names a key twice: `error` names it
  };
  Outcome outcome = Outcome::kNotJson;
  nlohmann::json value;
  std::string error;  // kDuplicateKey: a message naming the key and the fix
};

JsonBody ParseJsonBody(std::string_view text);

}  // namespace trtwatch
