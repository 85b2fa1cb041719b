// BuildGroups: build groups (builds/build_group.h) over the build manager. A group has
// no record of its own: its members' records carry "group": {"id", "target"}, and their
// ids derive from the group's (GroupMemberBuildId), so its document is derived from
// their records on every read and any replica of the store answers it. Once every
// member has ended, the replica that concludes it (the one its last member ended on, or
// any that reads it then) puts the members' engines it can reach under their group
// names in DATA_DIR/groups/<gid>/ (hard links, copies on another file system) with
// manifest.json (Triton's cc_model_filenames), each file atomically; two replicas doing
// it at once write the same bytes.
//
// Threading: on the build manager's thread, as the manager is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "builds/build_group.h"
#include "builds/build_manager.h"
#include "builds/gpu_routing.h"

namespace trtwatch::builds {

enum class GroupOutcome {
  kCreated,        // every member submitted
  kFound,          // `record`: the group document (or, for Manifest, the manifest)
  kCancelling,     // every member that had not ended was asked to stop
  kInvalid,        // the request or the cancel body is invalid
  kNotFound,       // no such group
  kNotYet,         // Manifest: a member has not ended yet
  kQueueFull,      // retry later
  kShuttingDown,   // submit again after the restart
  kStorageFailed,  // retry later
  kUnavailable,    // a member's replica could not be asked: retry later
};
using GroupResult = ManagerResult<GroupOutcome>;  // `record`: the group document; `id`: the group's

class BuildGroups {
 public:
  BuildGroups(BuildManager& manager, std::string data_dir, GpuTable gpu_types);

  // Whether a POST /builds body asks for a group ("targets"), to be sent to Submit.
  static bool AsksForGroup(const JsonBody& body);

  // Checks the request whole (every member as a build of its own) before any member is
  // recorded; then submits them. A member refused after others were recorded (a full
  // queue) cancels those: nothing of the group runs. `submitted_by`: every member's.
  GroupResult Submit(const JsonBody& body, const std::string& submitted_by = {});
  GroupResult Get(const std::string& gid);
  // The members' record documents, in the group's order (GET /builds?group=).
  std::vector<std::string> MemberRecords(const std::string& gid);
  // POST /groups/{gid}/cancel: every member that has not ended, with the body a build's
  // cancel takes; `by`: the user who asks (each member's cancelled_by).
  GroupResult Cancel(const std::string& gid, std::string_view body, const std::string& by = {});
  // GET /groups/{gid}/manifest: kNotYet until every member has ended.
  GroupResult Manifest(const std::string& gid);
  // GET /groups/{gid}/engines/{name}: the member's engine, as the build's download.
  ArtifactResult Engine(const std::string& gid, const std::string& engine_name);

  // A member of `gid` ended on this replica: the group is concluded if it was the last.
  void MemberEnded(const std::string& gid) { Load(gid); }

  std::string groups_dir() const { return data_dir_ + "/groups"; }
  std::string group_dir(const std::string& gid) const { return groups_dir() + "/" + gid; }

 private:
  struct Loaded {
    std::optional<GroupIndex> index;
    std::vector<GroupMember> members;
  };
  Loaded Load(const std::string& gid);
  GroupResult NotFound(const std::string& gid) const;
  // Once every member has ended: the engines under their names and manifest.json.
  void Conclude(const GroupIndex& index, const std::vector<GroupMember>& members);
  void Withdraw(const std::vector<std::string>& builds);  // a group that could not be made

  BuildManager& manager_;
  const std::string data_dir_;
  const GpuTable gpu_types_;
};

}  // namespace trtwatch::builds
