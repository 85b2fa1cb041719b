// AuditEntry: one line of the audit trail — who did what to which build or model, and
// when (docs/api.md, "Audit trail") — and the query that reads the trail back. The
// record stores keep the entries (builds/stores/record_store.h: AppendAudit,
// AuditPage, PruneAudit); builds/audit_log.h writes them after each action.
//
// Values come from requests (the caller's name, a model's name, a cancel's reason), so
// every entry is checked before it is stored: bounded, valid UTF-8, no control
// characters, a known action, a detail that is one small JSON object.
//
// Threading: plain values and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trtwatch::builds {

// The actions recorded; docs/api.md says what each one's target and detail are.
namespace audit_action {
inline constexpr std::string_view kBuildSubmit = "build.submit";
inline constexpr std::string_view kBuildCancel = "build.cancel";
inline constexpr std::string_view kGroupSubmit = "group.submit";
inline constexpr std::string_view kGroupCancel = "group.cancel";
inline constexpr std::string_view kModelUpload = "model.upload";
inline constexpr std::string_view kModelDelete = "model.delete";
inline constexpr std::string_view kTimingCacheDelete = "timing_cache.delete";
inline constexpr std::string_view kUiSignIn = "ui.sign_in";
inline constexpr std::string_view kUiSignOut = "ui.sign_out";
}  // namespace audit_action

inline constexpr std::array<std::string_view, 9> kAuditActions = {
    audit_action::kBuildSubmit, audit_action::kBuildCancel,        audit_action::kGroupSubmit,
    audit_action::kGroupCancel, audit_action::kModelUpload,        audit_action::kModelDelete,
    audit_action::kUiSignIn,    audit_action::kUiSignOut,          audit_action::kTimingCacheDelete};

// The bounds of an entry's values, in bytes.
inline constexpr size_t kAuditUserMax = 64;
inline constexpr size_t kAuditTargetMax = 256;
inline constexpr size_t kAuditDetailMax = 4096;
// A page of the trail: 1..kAuditLimitMax entries, kAuditLimitDefault when not asked.
inline constexpr int kAuditLimitDefault = 100;
inline constexpr int kAuditLimitMax = 1000;

struct AuditEntry {
  int64_t seq = 0;          // the store's number, increasing; 0 until stored
  int64_t at = 0;           // Unix seconds, from the injected Clock
  std::string user;         // who: the caller's name ("anonymous" without credentials)
  std::string action;       // one of kAuditActions
  std::string target;       // what: a build or group id, a model's name; empty for a sign-in
  std::string detail = "{}";  // a JSON object of at most kAuditDetailMax bytes
};

// Which entries to read, newest first; every filter is optional.
struct AuditQuery {
  int limit = kAuditLimitDefault;
  int64_t before = 0;         // only entries with seq < before; 0: from the newest
  std::string user;           // exactly this user
  std::string action;         // exactly this action
  std::string target_prefix;  // targets that start with it
};

// One page of the trail.
struct AuditEntries {
  std::vector<AuditEntry> entries;     // newest first
  std::optional<int64_t> next_before;  // pass back as `before` for older entries; none: no more
};

// Whether `action` is one of kAuditActions.
[[nodiscard]] bool IsAuditAction(std::string_view action);

// Ok, or the first value that breaks the rules above, named with its bound.
[[nodiscard]] Status CheckAuditEntry(const AuditEntry& entry);
// Ok, or the first bad value of `query` (limit out of 1..1000, before < 0, an unknown
// action, a filter over its bound).
[[nodiscard]] Status CheckAuditQuery(const AuditQuery& query);

// The page of `rows` (read newest first with LIMIT limit + 1: the extra row only tells
// that older entries follow).
[[nodiscard]] AuditEntries AuditPageOf(std::vector<AuditEntry> rows, int limit);

}  // namespace trtwatch::builds
