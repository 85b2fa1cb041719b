// Build groups' pure parts (builds/build_group.h): a request with "targets" split into
// its members, the group's state from theirs, the engines' names and Triton's manifest.
// Through the service, locally and on a real Slurm cluster: tests/e2e/test_service_groups.py,
// tests/e2e/test_slurm_groups.py.
#include "builds/build_group.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/build_id.h"

namespace trtwatch::builds {
namespace {

using nlohmann::json;

GpuTable Table() {
  GpuTableResult r = GpuTable::Parse({"h200=gres:h200,cc=9.0", "a100=gres:a100,cc=8.0", "l4=feature:l4,cc=8.9",
                                      "h100=gres:h100,cc=9.0", "t4=gres:t4"},
                                     "");
  EXPECT_EQ(r.error, "");
  return r.table;
}

json With(json body, const json& more) {
  body.update(more);
  return body;
}

GroupRequestResult Parse(const json& body) { return ParseGroupRequest(ParseJsonBody(body.dump()), Table()); }

TEST(BuildGroupTest, EveryTargetBecomesAMemberRoutedAsIfItAskedForThatGpu) {
  const GroupRequestResult r =
      Parse({{"model", "models/resnet50.onnx"}, {"options", {{"fp16", true}}}, {"targets", {"H200", "a100", "l4"}}});
  ASSERT_EQ(r.outcome, GroupRequestResult::Outcome::kGroup) << r.error;
  ASSERT_EQ(r.request.members.size(), 3u);
  EXPECT_EQ(r.request.model, "models/resnet50.onnx");
  EXPECT_EQ(r.request.members[0].target, "h200");  // lower case, as "gpu" types are
  EXPECT_EQ(r.request.members[0].compute_capability, "9.0");
  EXPECT_EQ(r.request.members[2].compute_capability, "8.9");
  const json& member = r.request.members[1].body;
  EXPECT_EQ(member, (json{{"model", "models/resnet50.onnx"}, {"options", {{"fp16", true}}}, {"gpu", {{"type", "a100"}}}}));
}

TEST(BuildGroupTest, ABodyWithoutTargetsIsNotAGroup) {
  EXPECT_EQ(Parse({{"simulate", "small-cnn"}}).outcome, GroupRequestResult::Outcome::kNotAGroup);
  EXPECT_EQ(ParseGroupRequest(ParseJsonBody("not json"), Table()).outcome, GroupRequestResult::Outcome::kNotAGroup);
}

TEST(BuildGroupTest, WrongTargetsAreRefusedWithTheRule) {
  const auto error = [](const json& body) {
    const GroupRequestResult r = Parse(body);
    EXPECT_EQ(r.outcome, GroupRequestResult::Outcome::kInvalid) << body;
    return r.error;
  };
  const json sim = {{"simulate", "small-cnn"}};
  EXPECT_EQ(error(With(sim, {{"targets", {"h200", "v100"}}})),
            "unknown target \"v100\"; this service knows h200 (9.0), a100 (8.0), l4 (8.9), h100 (9.0), t4");
  EXPECT_NE(error(With(sim, {{"targets", json::array()}})).find("1 to 16 distinct"), std::string::npos);
  EXPECT_NE(error(With(sim, {{"targets", "h200"}})).find("must be a list"), std::string::npos);
  EXPECT_NE(error(With(sim, {{"targets", {1}}})).find("must be a list"), std::string::npos);
  EXPECT_NE(error(With(sim, {{"targets", {"h200", "H200"}}})).find("\"h200\" is named twice"),
            std::string::npos);
  std::vector<std::string> seventeen(17, "h200");
  EXPECT_NE(error(With(sim, {{"targets", seventeen}})).find("1 to 16"), std::string::npos);
  EXPECT_NE(error(With(sim, {{"targets", {"h200"}}, {"gpu", {{"type", "h200"}}}})).find("not both"),
            std::string::npos);
  // A real build's engines are named by compute capability, and the manifest maps each to one.
  const json real = {{"model", "m.onnx"}};
  EXPECT_NE(error(With(real, {{"targets", {"t4"}}})).find("\"t4\" has no compute capability"), std::string::npos)
      << error(With(real, {{"targets", {"t4"}}}));
  EXPECT_NE(error(With(real, {{"targets", {"h200", "h100"}}})).find("share compute capability 9.0"),
            std::string::npos);
  // A simulated group writes no engine: neither matters.
  EXPECT_EQ(Parse(With(sim, {{"targets", {"t4", "h200", "h100"}}})).outcome,
            GroupRequestResult::Outcome::kGroup);
}

TEST(BuildGroupTest, EnginesAreNamedByModelTargetAndComputeCapability) {
  EXPECT_EQ(GroupEngineName("/models/resnet50.onnx", "h200", "9.0"), "resnet50.h200.sm90.engine");
  EXPECT_EQ(GroupEngineName("models:resnet50", "l4", "8.9"), "resnet50.l4.sm89.engine");
  EXPECT_EQ(GroupEngineName("nets/big net.v2.onnx", "b200", "10.0"), "big_net.v2.b200.sm100.engine");
}

GroupIndex Index() {
  GroupIndex index;
  index.id = "g_0123456789abcdef0123456789abcdef";
  index.created_at = 1700000000.5;
  index.model = "/m/resnet50.onnx";
  index.members = {{"h200", "b_1", "9.0"}, {"a100", "b_2", "8.0"}, {"l4", "b_3", "8.9"}};
  return index;
}

std::vector<GroupMember> Members(std::vector<BuildState> states) {
  std::vector<GroupMember> members;
  const GroupIndex index = Index();
  for (size_t i = 0; i < states.size(); ++i) {
    GroupMember m{index.members[i].target, index.members[i].build, states[i], index.members[i].compute_capability, "", "", 0};
    if (states[i] == BuildState::kSucceeded) {
      m.engine_name = GroupEngineName(index.model, m.target, m.compute_capability);
      m.engine_sha256 = std::string(64, static_cast<char>('a' + i));
      m.engine_bytes = 1000 + i;
    }
    members.push_back(m);
  }
  return members;
}

TEST(BuildGroupTest, TheGroupsStateFollowsItsMembers) {
  using S = BuildState;
  EXPECT_EQ(GroupStateName(Members({S::kQueued, S::kQueued, S::kQueued})), "queued");
  EXPECT_EQ(GroupStateName(Members({S::kQueued, S::kRunning, S::kSucceeded})), "running");
  EXPECT_EQ(GroupStateName(Members({S::kSucceeded, S::kCancelling, S::kCancelled})), "cancelling");
  EXPECT_EQ(GroupStateName(Members({S::kSucceeded, S::kSucceeded, S::kSucceeded})), "succeeded");
  // Ended: the first of failed > timed_out > interrupted > cancelled among them.
  EXPECT_EQ(GroupStateName(Members({S::kCancelled, S::kFailed, S::kSucceeded})), "failed");
  EXPECT_EQ(GroupStateName(Members({S::kCancelled, S::kTimedOut, S::kInterrupted})), "timed_out");
  EXPECT_EQ(GroupStateName(Members({S::kCancelled, S::kSucceeded, S::kInterrupted})), "interrupted");
  EXPECT_EQ(GroupStateName(Members({S::kCancelled, S::kSucceeded, S::kCancelled})), "cancelled");
}

TEST(BuildGroupTest, TheManifestMapsEachCapabilityToItsEngineOnceEveryMemberEnded) {
  using S = BuildState;
  EXPECT_TRUE(GroupManifest(Members({S::kSucceeded, S::kRunning, S::kSucceeded})).is_null());
  const json h200 = {{"sha256", std::string(64, 'a')}, {"size", 1000}};
  const json a100 = {{"sha256", std::string(64, 'b')}, {"size", 1001}};
  const json l4 = {{"sha256", std::string(64, 'c')}, {"size", 1002}};
  // With each engine's digest and size, as its download carries them.
  EXPECT_EQ(GroupManifest(Members({S::kSucceeded, S::kSucceeded, S::kSucceeded})),
            (json{{"cc_model_filenames",
                   {{"9.0", "resnet50.h200.sm90.engine"}, {"8.0", "resnet50.a100.sm80.engine"},
                    {"8.9", "resnet50.l4.sm89.engine"}}},
                  {"engines", {{"resnet50.h200.sm90.engine", h200}, {"resnet50.a100.sm80.engine", a100},
                               {"resnet50.l4.sm89.engine", l4}}}}));
  // A member without an engine is left out.
  EXPECT_EQ(GroupManifest(Members({S::kSucceeded, S::kFailed, S::kSucceeded})),
            (json{{"cc_model_filenames", {{"9.0", "resnet50.h200.sm90.engine"}, {"8.9", "resnet50.l4.sm89.engine"}}},
                  {"engines", {{"resnet50.h200.sm90.engine", h200}, {"resnet50.l4.sm89.engine", l4}}}}));
}

TEST(BuildGroupTest, AMemberIsReadFromItsRecordAndAMissingOneCountsAsInterrupted) {
  const GroupIndex index = Index();
  BuildRecord r;
  r.id = "b_1";
  r.state = BuildState::kSucceeded;
  r.engine = "/data/engines/b_1.engine";
  r.engine_sha256 = std::string(64, 'e');
  r.engine_bytes = 4096;
  r.group = GroupTag{index.id, "h200"};
  BuildRecord stored;
  ASSERT_TRUE(RecordFromJson(RecordToJson(r), &stored));
  EXPECT_EQ(stored.group, r.group);  // the record keeps its group
  const GroupMember ok = MemberFromRecord(index, index.members[0], RecordToJson(r));
  EXPECT_EQ(ok.state, BuildState::kSucceeded);
  EXPECT_EQ(ok.engine_name, "resnet50.h200.sm90.engine");
  EXPECT_EQ(ok.engine_sha256, std::string(64, 'e'));  // the record's digest, for the manifest
  EXPECT_EQ(ok.engine_bytes, 4096u);
  r.engine.clear();  // a simulated build: no engine, no name
  EXPECT_EQ(MemberFromRecord(index, index.members[0], RecordToJson(r)).engine_name, "");
  EXPECT_EQ(MemberFromRecord(index, index.members[1], "").state, BuildState::kInterrupted);
}

TEST(BuildGroupTest, MembersIdsDeriveFromTheGroupsIdAndLookLikeBuildIds) {
  const std::string gid = "g_0123456789abcdef0123456789abcdef";
  const std::string first = GroupMemberBuildId(gid, 0);
  EXPECT_EQ(first, GroupMemberBuildId(gid, 0));  // any replica finds the same members
  EXPECT_EQ(first.size(), 34u);
  EXPECT_TRUE(first.starts_with("b_")) << first;
  EXPECT_NE(GroupMemberBuildId(gid, 1), first);
  EXPECT_NE(GroupMemberBuildId("g_1123456789abcdef0123456789abcdef", 0), first);
  EXPECT_EQ(GroupModelOfRequest(R"({"model": "models:resnet50", "gpu": {"type": "h200"}})"), "models:resnet50");
  EXPECT_EQ(GroupModelOfRequest(R"({"simulate": "small-cnn"})"), "small-cnn");
  EXPECT_EQ(GroupModelOfRequest("not json"), "");
}

TEST(BuildGroupTest, TheDocumentShowsEveryMember) {
  const GroupIndex index = Index();
  const json doc = GroupDocument(index, Members({BuildState::kSucceeded, BuildState::kRunning, BuildState::kQueued}));
  EXPECT_EQ(doc["id"], index.id);
  EXPECT_EQ(doc["created_at"], "2023-11-14T22:13:20.500Z");
  EXPECT_EQ(doc["state"], "running");
  EXPECT_EQ(doc["targets"], (json{"h200", "a100", "l4"}));
  EXPECT_EQ(doc["members"][0], (json{{"target", "h200"}, {"build", "b_1"}, {"state", "succeeded"},
                                      {"compute_capability", "9.0"}, {"engine_name", "resnet50.h200.sm90.engine"}}));
  EXPECT_TRUE(doc["members"][1]["engine_name"].is_null());
  EXPECT_TRUE(doc["manifest"].is_null());
}

TEST(BuildGroupTest, GroupIdsAreGAndThirtyTwoHexDigits) {
  EXPECT_TRUE(ValidGroupId("g_0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(ValidGroupId("b_0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(ValidGroupId("g_0123456789ABCDEF0123456789abcdef"));
  EXPECT_FALSE(ValidGroupId("g_../../etc"));
  const std::string made = NewGroupId();
  EXPECT_TRUE(ValidGroupId(made)) << made;
  EXPECT_NE(NewGroupId(), made);
}

}  // namespace
}  // namespace trtwatch::builds
