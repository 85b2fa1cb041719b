#include "protocol/json_body.h"

#include <optional>
#include <set>
#include <vector>

#include "protocol/utf8.h"

namespace trtwatch {

using nlohmann::json;

JsonBody ParseJsonBody(std::string_view text) {
  std::vector<std::set<std::string>> keys_of_open_objects;
  std::optional<std::string> duplicate;  // the first key named twice in one object
  const json::parser_callback_t spot_duplicates = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys_of_open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      keys_of_open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !keys_of_open_objects.empty() &&
               !keys_of_open_objects.back().insert(parsed.get<std::string>()).second && !duplicate) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  JsonBody body;
  body.value = json::parse(text, spot_duplicates, /*allow_exceptions=*/false);
  if (body.value.is_discarded()) {
    body.value = nullptr;
    return body;
  }
  if (duplicate) {
    body.outcome = JsonBody::Outcome::kDuplicateKey;
    body.value = nullptr;
    body.error = "duplicate key \"" + ValidBoundedText(*duplicate, 256) +
                 "\" in one JSON object; give each key once (RFC 8259 section 4: names within an object should "
                 "be unique, and parsers disagree about which one counts)";
    return body;
  }
  body.outcome = JsonBody::Outcome::kOk;
  return body;
}

}  // namespace trtwatch
