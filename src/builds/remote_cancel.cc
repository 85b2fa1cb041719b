#include "builds/remote_cancel.h"

#include <nlohmann/json.hpp>

#include "builds/build_record.h"  // kMaxClientText
#include "builds/build_request.h"  // GraceFromSeconds
#include "protocol/utf8.h"

namespace trtwatch::builds {

using nlohmann::json;

std::string CancelAskToJson(const CancelAsk& ask) {
  return json{{"reason", ask.reason},
              {"message", ask.message},
              {"grace", ask.grace ? json(*ask.grace) : json(nullptr)},
              {"by", ask.by}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<CancelAsk> CancelAskFromJson(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  const auto reason = j.find("reason");
  const auto message = j.find("message");
  const auto grace = j.find("grace");
  if (reason == j.end() || !reason->is_string() || message == j.end() || !message->is_string() || grace == j.end()) {
    return std::nullopt;
  }
  CancelAsk ask;
  ask.reason = reason->get<std::string>();
  if (ask.reason != "api" && ask.reason != "budget" && ask.reason != "group") return std::nullopt;
  ask.message = ValidBoundedText(message->get<std::string>(), kMaxClientText);
  // Absent in asks stored before users existed.
  if (const auto by = j.find("by"); by != j.end() && by->is_string()) {
    ask.by = ValidBoundedText(by->get<std::string>(), kMaxUserText);
  }
  if (!grace->is_null()) {
    if (!grace->is_number()) return std::nullopt;
    const GraceResult checked = GraceFromSeconds(grace->get<double>());
    if (checked.outcome != GraceResult::Outcome::kOk) return std::nullopt;
    ask.grace = checked.seconds;
  }
  return ask;
}

}  // namespace trtwatch::builds
