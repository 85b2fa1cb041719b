#include "builds/audit_log.h"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "builds/metrics.h"
#include "builds/stores/record_store.h"
#include "core/clock.h"
#include "protocol/utf8.h"

namespace trtwatch::builds {

AuditLog::AuditLog(RecordStore& store, const Clock& clock, Metrics& metrics)
    : store_(store), clock_(clock), metrics_(metrics) {}

AuditEntry AuditLog::EntryOf(std::string_view caller, std::string_view action, std::string_view target,
                             std::string detail) const {
  AuditEntry entry;
  entry.at = static_cast<int64_t>(std::floor(clock_.UnixSeconds()));
  entry.user = caller.empty() ? std::string(kAnonymousUser) : ValidBoundedText(caller, kAuditUserMax);
  entry.action = std::string(action);
  entry.target = ValidBoundedText(target, kAuditTargetMax);
  entry.detail = detail.size() <= kAuditDetailMax ? std::move(detail) : std::string("{\"cut\":true}");
  return entry;
}

bool AuditLog::Record(std::string_view caller, std::string_view action, std::string_view target, std::string detail) {
  const AuditEntry entry = EntryOf(caller, action, target, std::move(detail));
  const Result<int64_t> stored = store_.AppendAudit(entry);
  if (stored.ok()) return true;
  metrics_.AuditWriteFailed();
  std::fprintf(stderr, "trtwatch serve: could not record %s of \"%s\" by \"%s\" in the audit trail: %s\n",
               entry.action.c_str(), entry.target.c_str(), entry.user.c_str(), stored.error().c_str());
  return false;
}

namespace {

// A field of a record (JSON text); null when it has none.
nlohmann::json FieldOf(std::string_view record, const char* field) {
  const nlohmann::json doc = nlohmann::json::parse(record, nullptr, /*allow_exceptions=*/false);
  return doc.is_object() && doc.contains(field) ? doc[field] : nlohmann::json(nullptr);
}

}  // namespace

bool AuditLog::RecordSubmit(std::string_view caller, bool group, std::string_view id, std::string_view record) {
  nlohmann::json detail = {{"model", FieldOf(record, "model")}};
  if (group) {
    const nlohmann::json members = FieldOf(record, "members");
    detail["members"] = members.is_array() ? members.size() : 0;
  }
  return Record(caller, group ? audit_action::kGroupSubmit : audit_action::kBuildSubmit, id, detail.dump());
}

bool AuditLog::RecordCancel(std::string_view caller, std::string_view id, std::string_view record) {
  const nlohmann::json cancel = FieldOf(record, "cancel");
  nlohmann::json detail = nlohmann::json::object();
  if (cancel.is_object()) {
    detail = {{"reason", cancel.value("reason", "")}, {"message", cancel.value("message", "")}};
  }
  return Record(caller, audit_action::kBuildCancel, id, detail.dump());
}

}  // namespace trtwatch::builds
