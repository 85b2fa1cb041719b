#include "builds/retention.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <vector>

#include "builds/artifacts/artifact_store.h"
#include "builds/build_group.h"
#include "builds/build_record.h"

namespace trtwatch::builds {

namespace {

namespace fs = std::filesystem;

// A group is found by its first member's record (builds/build_groups.h): once that is
// gone, so is the group, and the engine links in its folder would keep their disk space.
size_t RemoveFoldersOfPrunedGroups(const std::string& groups_dir, const std::vector<std::string>& pruned_ids) {
  if (groups_dir.empty() || pruned_ids.empty()) return 0;
  const std::set<std::string> pruned(pruned_ids.begin(), pruned_ids.end());
  std::vector<fs::path> gone;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(groups_dir, ec)) {
    const std::string gid = entry.path().filename().string();
    if (ValidGroupId(gid) && pruned.count(GroupMemberBuildId(gid, 0))) gone.push_back(entry.path());
  }
  size_t removed = 0;
  for (const fs::path& folder : gone) {
    std::error_code rm;
    fs::remove_all(folder, rm);
    if (!rm) ++removed;
  }
  return removed;
}

}  // namespace

Result<int64_t> PruneAuditTrail(RecordStore& store, const RetentionPolicy& policy, double now_unix) {
  if (policy.audit_max_age_seconds <= 0) return int64_t{0};
  return store.PruneAudit(static_cast<int64_t>(std::floor(now_unix - policy.audit_max_age_seconds)));
}

PruneReport PruneFinishedBuilds(RecordStore& store, const RetentionPolicy& policy, double now_unix,
                                const BuildFolders& folders) {
  PruneReport report;
  if (!policy.enabled()) return report;
  std::vector<std::string> final_statuses;
  for (int i = 0; i <= static_cast<int>(BuildState::kInterrupted); ++i) {
    if (IsFinal(static_cast<BuildState>(i))) final_statuses.emplace_back(BuildStateName(static_cast<BuildState>(i)));
  }
  const std::string cutoff = policy.max_age_seconds > 0 ? FormatTime(now_unix - policy.max_age_seconds) : "";
  const Result<std::vector<std::string>> pruned = store.Prune(final_statuses, cutoff, policy.max_count);
  if (!pruned.ok()) {
    report.error = pruned.error();
    return report;
  }
  const std::vector<std::string>& removed = *pruned;
  // The records are gone: their engines and cache copies are no one's now (a missing one is fine).
  for (const std::string& id : removed) {
    RemoveWithSidecar(folders.engines + "/" + id + ".engine");
    RemoveWithSidecar(folders.engines + "/" + id + ".timing-cache");
  }
  report.removed = removed.size();
  report.removed_groups = RemoveFoldersOfPrunedGroups(folders.groups, removed);
  return report;
}

}  // namespace trtwatch::builds
