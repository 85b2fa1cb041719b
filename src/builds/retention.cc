#include "builds/retention.h"

#include <cstdio>
#include <vector>

#include "builds/artifacts/artifact_store.h"
#include "builds/build_record.h"

namespace trtwatch::builds {

PruneReport PruneFinishedBuilds(RecordStore& store, const RetentionPolicy& policy, double now_unix,
                                const std::string& engine_dir) {
  PruneReport report;
  if (!policy.enabled()) return report;
  std::vector<std::string> final_statuses;
  for (int i = 0; i <= static_cast<int>(BuildState::kInterrupted); ++i) {
    if (IsFinal(static_cast<BuildState>(i))) final_statuses.emplace_back(BuildStateName(static_cast<BuildState>(i)));
  }
  const std::string cutoff = policy.max_age_seconds > 0 ? FormatTime(now_unix - policy.max_age_seconds) : "";
  std::vector<std::string> removed;
  if (!store.Prune(final_statuses, cutoff, policy.max_count, &removed)) {
    report.error = store.last_error();
    return report;
  }
  // The records are gone: their engines and cache copies are no one's now (a missing one is fine).
  for (const std::string& id : removed) {
    RemoveWithSidecar(engine_dir + "/" + id + ".engine");
    RemoveWithSidecar(engine_dir + "/" + id + ".timing-cache");
  }
  report.removed = removed.size();
  return report;
}

}  // namespace trtwatch::builds
