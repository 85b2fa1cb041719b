#include "service/api_audit.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "builds/build_record.h"
#include "builds/stores/record_store.h"
#include "service/http_request.h"

namespace trtwatch::service {

using nlohmann::json;

namespace {

std::string ActionList() {
  std::string list;
  for (std::string_view a : builds::kAuditActions) list += (list.empty() ? "" : ", ") + std::string(a);
  return list;
}

// One parameter into `query`; empty, or the error naming it and what it takes.
std::string TakeParameter(const std::string& key, const std::string& value, builds::AuditQuery* query) {
  if (key == "limit") {
    int64_t limit = 0;
    if (!ParseInt(value, &limit) || limit < 1 || limit > builds::kAuditLimitMax) {
      return "limit must be an integer from 1 to " + std::to_string(builds::kAuditLimitMax);
    }
    query->limit = static_cast<int>(limit);
  } else if (key == "before") {
    if (!ParseInt(value, &query->before) || query->before < 1) {
      return "before must be a positive integer: the next_before of the page before";
    }
  } else if (key == "user") {
    if (value.empty() || value.size() > builds::kAuditUserMax) return "user must be a user's name of 1 to 64 bytes";
    query->user = value;
  } else if (key == "action") {
    if (!builds::IsAuditAction(value)) return "action must be one of " + ActionList();
    query->action = value;
  } else if (key == "target") {
    if (value.size() > builds::kAuditTargetMax) return "target must be a prefix of at most 256 bytes";
    query->target_prefix = value;
  } else {
    return "unknown query parameter \"" + key + "\"; use limit, before, user, action or target";
  }
  return "";
}

json EntryJson(const builds::AuditEntry& e) {
  json detail = json::parse(e.detail, nullptr, /*allow_exceptions=*/false);
  if (!detail.is_object()) detail = json::object();  // stored entries were checked; this is belt and braces
  return {{"seq", e.seq},       {"at", builds::FormatTime(static_cast<double>(e.at))},
          {"user", e.user},     {"action", e.action},
          {"target", e.target}, {"detail", std::move(detail)}};
}

}  // namespace

Result<builds::AuditQuery> ParseAuditQuery(std::string_view target) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::string error;
  if (!ParseQuery(target, &pairs, &error)) return Status::Error(error);
  builds::AuditQuery query;
  for (const auto& [key, value] : pairs) {
    if (std::string why = TakeParameter(key, value, &query); !why.empty()) return Status::Error(why);
  }
  if (Status checked = builds::CheckAuditQuery(query); !checked.ok()) return checked;
  return query;
}

ApiAnswer AuditAnswer(ApiContext& api, const ApiRequest& req) {
  if (req.method != Method::kGet) return MethodNotAllowed("GET");
  const Result<builds::AuditQuery> query = ParseAuditQuery(req.target);
  if (!query.ok()) return ErrorAnswer(400, query.error());
  const Result<builds::AuditEntries> page = api.store.AuditPage(*query);
  if (!page.ok()) {
    ApiAnswer unavailable = ErrorAnswer(503, "the audit trail could not be read: " + page.error() + "; retry later");
    unavailable.Set("Retry-After", "1");
    return unavailable;
  }
  json entries = json::array();
  for (const builds::AuditEntry& e : page->entries) entries.push_back(EntryJson(e));
  const json next = page->next_before ? json(*page->next_before) : json(nullptr);
  return JsonAnswer(200, json{{"entries", std::move(entries)}, {"next_before", next}}.dump());
}

}  // namespace trtwatch::service
