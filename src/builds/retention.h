// Retention: which finished builds the service keeps (`--retain-for DUR`,
// `--retain-count N`) and the pruning of the others: record, event log, the engine the
// service stored for it, and the folder of a group whose first member it was. Builds
// still queued or running are never pruned. The audit trail (builds/audit_entry.h) is
// kept for `--audit-retain-for DUR` (a year unless told; 0: forever), pruned at the
// same cadence.
//
// Threading: PruneFinishedBuilds uses the store, so it runs where the store is used
// (the service's event-loop thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "builds/stores/record_store.h"

namespace trtwatch::builds {

struct RetentionPolicy {
  double max_age_seconds = 0;  // since the build finished; 0 = no age limit
  int64_t max_count = 0;       // the newest finished builds kept; 0 = no count limit
  bool enabled() const { return max_age_seconds > 0 || max_count > 0; }
  // Audit entries older than this are pruned; 0 = kept forever.
  double audit_max_age_seconds = kDefaultAuditRetentionSeconds;
  static constexpr double kDefaultAuditRetentionSeconds = 365 * 86400.0;
};

// Where the service keeps the files of its builds, removed with them.
struct BuildFolders {
  std::string engines;  // <id>.engine, <id>.timing-cache
  std::string groups;   // <gid>/: a group's engine links and manifest (builds/build_groups.h)
};

struct PruneReport {
  size_t removed = 0;
  size_t removed_groups = 0;
  std::string error;  // the store's, when it could not prune (nothing was removed)
};

// Removes the audit entries older than policy.audit_max_age_seconds (none when it is
// 0). The count removed, or the store's error.
[[nodiscard]] Result<int64_t> PruneAuditTrail(RecordStore& store, const RetentionPolicy& policy, double now_unix);

PruneReport PruneFinishedBuilds(RecordStore& store, const RetentionPolicy& policy, double now_unix,
                                const BuildFolders& folders);

}  // namespace trtwatch::builds
