#include "builds/build_groups.h"

#include <cstdio>
#include <memory>
#include <utility>

#include "core/build_id.h"
#include "platform/atomic_file.h"
#include "platform/file_access.h"
#include "protocol/json_body.h"

namespace trtwatch::builds {

namespace {

constexpr char kGroupManifestFile[] = "manifest.json";

GroupOutcome GroupOutcomeOf(SubmitOutcome outcome) {
  switch (outcome) {
    case SubmitOutcome::kCreated:
      return GroupOutcome::kCreated;
    case SubmitOutcome::kInvalid:
      return GroupOutcome::kInvalid;
    case SubmitOutcome::kQueueFull:
      return GroupOutcome::kQueueFull;
    case SubmitOutcome::kShuttingDown:
      return GroupOutcome::kShuttingDown;
    case SubmitOutcome::kStorageFailed:
      return GroupOutcome::kStorageFailed;
  }
  return GroupOutcome::kStorageFailed;
}

GroupResult GroupRefusal(GroupOutcome outcome, std::string error) { return {outcome, "", std::move(error), ""}; }

}  // namespace

BuildGroups::BuildGroups(BuildManager& manager, std::string data_dir, GpuTable gpu_types)
    : manager_(manager), data_dir_(std::move(data_dir)), gpu_types_(std::move(gpu_types)) {
  manager_.AttachGroups(*this, [this](const std::string& gid) { MemberEnded(gid); });
}

bool BuildGroups::AsksForGroup(const JsonBody& body) {
  return body.outcome == JsonBody::Outcome::kOk && body.value.is_object() && body.value.contains("targets");
}

GroupResult BuildGroups::Submit(const JsonBody& body, const std::string& submitted_by) {
  const GroupRequestResult parsed = ParseGroupRequest(body, gpu_types_);
  if (parsed.outcome == GroupRequestResult::Outcome::kInvalid) return GroupRefusal(GroupOutcome::kInvalid, parsed.error);
  if (parsed.outcome == GroupRequestResult::Outcome::kNotAGroup) {
    return GroupRefusal(GroupOutcome::kInvalid, "a group request names its GPU types in \"targets\", e.g. "
                                           "{\"model\": \"resnet50.onnx\", \"targets\": [\"h200\", \"a100\"]}");
  }
  // Whole before anything is recorded: one member refused refuses the group. Each
  // member's request is parsed once, here, and travels typed to its build.
  std::vector<BuildRequest> requests;
  for (const GroupRequest::Member& m : parsed.request.members) {
    Result<BuildRequest> member = manager_.Parse(JsonBody{JsonBody::Outcome::kOk, m.body, ""});
    if (!member.ok()) return GroupRefusal(GroupOutcome::kInvalid, "target \"" + m.target + "\": " + member.error());
    requests.push_back(std::move(member).value());
    requests.back().submitted_by = submitted_by;
  }
  const std::string gid = NewGroupId();
  std::vector<std::string> builds;
  for (size_t i = 0; i < parsed.request.members.size(); ++i) {
    const GroupRequest::Member& m = parsed.request.members[i];
    SubmitResult r = manager_.Submit(std::move(requests[i]), GroupTag{gid, m.target}, GroupMemberBuildId(gid, i));
    if (r.outcome != SubmitOutcome::kCreated) {
      Withdraw(builds);
      return GroupRefusal(GroupOutcomeOf(r.outcome),
                          "target \"" + m.target + "\": " + r.error +
                              (builds.empty() ? "" : " (the group's other builds were cancelled)"));
    }
    builds.push_back(r.id);
  }
  GroupResult created = Get(gid);
  created.outcome = GroupOutcome::kCreated;
  return created;
}

void BuildGroups::Withdraw(const std::vector<std::string>& builds) {
  for (const std::string& id : builds) manager_.CancelFor(id, "api", "its group could not be made");
}

BuildGroups::Loaded BuildGroups::Load(const std::string& gid) {
  Loaded loaded;
  if (!ValidGroupId(gid)) return loaded;
  GroupIndex index;
  index.id = gid;
  std::vector<std::string> records;
  for (size_t i = 0; i < kMaxGroupTargets; ++i) {
    GetResult got = manager_.Get(GroupMemberBuildId(gid, i));
    BuildRecord r;
    if (got.outcome != GetOutcome::kFound || !RecordFromJson(got.record, &r) || !r.group || r.group->id != gid) break;
    if (i == 0) {
      index.created_at = r.created_at;
      index.model = GroupModelOfRequest(r.request_json);
    }
    const GpuRoute route = gpu_types_.Route(GpuNeed{r.group->target, ""});
    index.members.push_back({r.group->target, r.id, route.type ? route.type->compute_capability : ""});
    records.push_back(std::move(got.record));
  }
  if (index.members.empty()) return loaded;
  for (size_t i = 0; i < index.members.size(); ++i) {
    loaded.members.push_back(MemberFromRecord(index, index.members[i], records[i]));
  }
  loaded.index = std::move(index);
  if (GroupEnded(loaded.members)) Conclude(*loaded.index, loaded.members);
  return loaded;
}

GroupResult BuildGroups::NotFound(const std::string& gid) const {
  return {GroupOutcome::kNotFound, "", "no group \"" + gid + "\"; group ids look like g_ and 32 hex digits", gid};
}

GroupResult BuildGroups::Get(const std::string& gid) {
  const Loaded loaded = Load(gid);
  if (!loaded.index) return NotFound(gid);
  return {GroupOutcome::kFound, GroupDocument(*loaded.index, loaded.members).dump(), "", gid};
}

std::vector<std::string> BuildGroups::MemberRecords(const std::string& gid) {
  std::vector<std::string> records;
  const Loaded loaded = Load(gid);
  if (!loaded.index) return records;
  for (const GroupIndex::Member& m : loaded.index->members) {
    if (GetResult r = manager_.Get(m.build); r.outcome == GetOutcome::kFound) records.push_back(std::move(r.record));
  }
  return records;
}

GroupResult BuildGroups::Cancel(const std::string& gid, std::string_view body, const std::string& by) {
  std::optional<double> grace;
  std::string body_error;
  if (!ParseCancelBody(body, &grace, &body_error)) return GroupRefusal(GroupOutcome::kInvalid, body_error);
  const Loaded loaded = Load(gid);
  if (!loaded.index) return NotFound(gid);
  std::string unavailable;
  for (const GroupMember& m : loaded.members) {
    if (IsFinal(m.state)) continue;
    // Each member says what stopped it: its group's cancel, not one of its own.
    const CancelResult r = manager_.CancelFor(m.build, "group", "cancelled by POST /groups/" + gid + "/cancel", grace, by);
    if (r.outcome == CancelOutcome::kUnavailable) unavailable = r.error;
  }
  if (!unavailable.empty()) return {GroupOutcome::kUnavailable, "", unavailable, gid};
  GroupResult after = Get(gid);
  after.outcome = GroupOutcome::kCancelling;
  return after;
}

GroupResult BuildGroups::Manifest(const std::string& gid) {
  const Loaded loaded = Load(gid);
  if (!loaded.index) return NotFound(gid);
  if (!GroupEnded(loaded.members)) {
    return {GroupOutcome::kNotYet, "",
            "group " + gid + " is still " + std::string(GroupStateName(loaded.members)) +
                "; its manifest is written once every member has ended (follow GET /groups/" + gid + ")",
            gid};
  }
  return {GroupOutcome::kFound, GroupManifest(loaded.members).dump(), "", gid};
}

ArtifactResult BuildGroups::Engine(const std::string& gid, const std::string& engine_name) {
  const Loaded loaded = Load(gid);
  if (!loaded.index) return {ArtifactOutcome::kNotFound, "", {}, NotFound(gid).error};
  for (const GroupMember& m : loaded.members) {
    if (!m.engine_name.empty() && m.engine_name == engine_name) return manager_.Artifact(m.build, ArtifactKind::kEngine);
  }
  for (const GroupMember& m : loaded.members) {
    if (!IsFinal(m.state)) {
      return {ArtifactOutcome::kNotYet, "", {},
              "group " + gid + " is still running; its engines are named once their builds have succeeded "
              "(follow GET /groups/" + gid + ")"};
    }
  }
  return {ArtifactOutcome::kNone, "", {},
          "group " + gid + " has no engine \"" + engine_name + "\"; its engines are the members' engine_name in GET "
          "/groups/" + gid};
}

void BuildGroups::Conclude(const GroupIndex& index, const std::vector<GroupMember>& members) {
  const std::string dir = group_dir(index.id);
  if (InspectPath(dir + "/" + kGroupManifestFile).kind == PathKind::kFile) return;  // concluded already
  std::string error;
  if (!MakePrivateFolder(groups_dir(), &error) || !MakePrivateFolder(dir, &error)) {
    std::fprintf(stderr, "trtwatch serve: group %s: its folder cannot be made: %s\n", index.id.c_str(), error.c_str());
    return;
  }
  for (const GroupMember& m : members) {
    if (m.engine_name.empty()) continue;
    const ArtifactResult engine = manager_.Artifact(m.build, ArtifactKind::kEngine);
    if (engine.outcome != ArtifactOutcome::kFound) continue;
    std::unique_ptr<AtomicFile> file = AtomicFile::Create(dir + "/" + m.engine_name, &error);
    if (!file) break;
    if (!file->LinkFrom(engine.path) && !file->CopyFrom(engine.path, &error)) continue;
    if (!file->Commit(&error)) continue;
  }
  if (!WriteFileAtomically(dir + "/" + kGroupManifestFile, GroupManifest(members).dump(2) + "\n", &error)) {
    std::fprintf(stderr, "trtwatch serve: group %s: its manifest cannot be written: %s\n", index.id.c_str(),
                 error.c_str());
  }
}

}  // namespace trtwatch::builds
