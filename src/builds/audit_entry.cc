#include "builds/audit_entry.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "protocol/utf8.h"

namespace trtwatch::builds {

namespace {

// Ok, or why `value` (named `what`) is no text of at most `max` bytes on one line.
Status CheckText(std::string_view what, std::string_view value, size_t max) {
  if (value.size() > max) {
    return Status::Error(std::string(what) + " has " + std::to_string(value.size()) + " bytes; at most " +
                         std::to_string(max) + " are kept");
  }
  if (ValidUtf8(value) != value) return Status::Error(std::string(what) + " is not valid UTF-8");
  const bool control = std::any_of(value.begin(), value.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  if (control) return Status::Error(std::string(what) + " holds a control character (a line break, a tab…)");
  return OkStatus();
}

std::string ActionList() {
  std::string list;
  for (std::string_view a : kAuditActions) list += (list.empty() ? "" : ", ") + std::string(a);
  return list;
}

}  // namespace

bool IsAuditAction(std::string_view action) {
  return std::find(kAuditActions.begin(), kAuditActions.end(), action) != kAuditActions.end();
}

Status CheckAuditEntry(const AuditEntry& entry) {
  if (entry.user.empty()) return Status::Error("the audit entry names no user; record \"anonymous\" instead");
  if (Status s = CheckText("the user", entry.user, kAuditUserMax); !s.ok()) return s;
  if (!IsAuditAction(entry.action)) {
    return Status::Error("unknown audit action \"" + ValidBoundedText(entry.action, 64) + "\"; one of " + ActionList());
  }
  if (Status s = CheckText("the target", entry.target, kAuditTargetMax); !s.ok()) return s;
  if (entry.detail.size() > kAuditDetailMax) {
    return Status::Error("the detail has " + std::to_string(entry.detail.size()) + " bytes; at most " +
                         std::to_string(kAuditDetailMax) + " are kept");
  }
  if (!nlohmann::json::parse(entry.detail, nullptr, /*allow_exceptions=*/false).is_object()) {
    return Status::Error("the detail is not a JSON object");
  }
  if (entry.at < 0) return Status::Error("the time is before 1970");
  return OkStatus();
}

Status CheckAuditQuery(const AuditQuery& query) {
  if (query.limit < 1 || query.limit > kAuditLimitMax) {
    return Status::Error("limit must be 1 to " + std::to_string(kAuditLimitMax));
  }
  if (query.before < 0) return Status::Error("before must be a seq from next_before (a whole number > 0)");
  if (!query.action.empty() && !IsAuditAction(query.action)) {
    return Status::Error("action must be one of " + ActionList());
  }
  if (Status s = CheckText("user", query.user, kAuditUserMax); !s.ok()) return s;
  return CheckText("target", query.target_prefix, kAuditTargetMax);
}

AuditEntries AuditPageOf(std::vector<AuditEntry> rows, int limit) {
  AuditEntries page;
  if (rows.size() > static_cast<size_t>(limit)) {
    rows.resize(static_cast<size_t>(limit));
    page.next_before = rows.back().seq;
  }
  page.entries = std::move(rows);
  return page;
}

}  // namespace trtwatch::builds
