// BuildGroup: one request, every target. POST /builds with "targets": ["h200", "a100"]
// becomes one build per GPU type of the service's table, each routed as if it asked
// for "gpu": {"type": TARGET}; the group's document (its state, its members, the
// manifest of their engines) is derived from the members' records. This file holds the
// pure parts: the request split into members, the members' ids (derived from the
// group's, so that a group stores nothing of its own), its state, the engines' names and
// Triton's manifest. builds/build_groups.h runs them over the build manager.
//
// Threading: values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "builds/build_record.h"  // BuildState
#include "builds/gpu_routing.h"   // GpuTable
#include "protocol/json_body.h"

namespace trtwatch::builds {

inline constexpr size_t kMaxGroupTargets = 16;

// "g_" and 32 lowercase hex digits (inline: the HTTP layer's pure routing checks it
// without linking the rest).
inline bool ValidGroupId(std::string_view id) {
  if (id.size() != 34 || !id.starts_with("g_")) return false;
  for (const char c : id.substr(2)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// A request with "targets", checked whole: every member's body, each as POST /builds
// takes it alone.
struct GroupRequest {
  struct Member {
    std::string target;              // lower case: "h200"
    std::string compute_capability;  // the table's ("9.0"); empty where it says none
    nlohmann::json body;             // the request without "targets", with "gpu": {"type": target}
  };
  std::vector<Member> members;  // in the request's order
  std::string model;            // "model" as given, or the "simulate" profile
};
struct GroupRequestResult {
  enum class Outcome {
    kNotAGroup,  // no "targets": a build of its own (ParseBuildRequest judges it)
    kGroup,
    kInvalid,    // `error`: the problem and the fix
  };
  Outcome outcome = Outcome::kNotAGroup;
  GroupRequest request;
  std::string error;
};
// "targets": 1 to kMaxGroupTargets distinct type names of `table`, not with "gpu". A
// group of real builds names its engines by compute capability, so each of its targets
// needs one in the table.
GroupRequestResult ParseGroupRequest(const JsonBody& body, const GpuTable& table);

// The id of a group's member `index` (0 to kMaxGroupTargets - 1): "b_" and the first 32
// hex digits of SHA-256("<gid>/<index>"). A group stores nothing of its own: any replica
// finds its members from its id alone, and they stay as unguessable as the group's id.
std::string GroupMemberBuildId(std::string_view gid, size_t index);

// A group as read back from its members' records.
struct GroupIndex {
  struct Member {
    std::string target;
    std::string build;
    std::string compute_capability;  // the GPU table's for the target; empty: none
  };
  std::string id;
  double created_at = 0;  // Unix seconds: its first member's
  std::string model;      // its first member's request: "model" as given, or "simulate"
  std::vector<Member> members;
};
// The "model" (or "simulate") of a member's stored request (its JSON).
std::string GroupModelOfRequest(std::string_view request_json);

// "resnet50.h200.sm90.engine": the model's file name without its extension (a
// "models:NAME" model: NAME), the target and the compute capability; characters other
// than letters, digits, '.', '_' and '-' become '_' (the name is a URL path segment).
std::string GroupEngineName(std::string_view model, std::string_view target, std::string_view compute_capability);

// One member as the group document shows it.
struct GroupMember {
  std::string target;
  std::string build;
  BuildState state = BuildState::kQueued;
  std::string compute_capability;  // empty: unknown
  std::string engine_name;         // once it succeeded with an engine and its capability is known
  std::string engine_sha256;       // the engine's digest (hex) as its record holds it; empty: unknown
  uint64_t engine_bytes = 0;
};
// Reads a member's record (its JSON document; empty when the record is gone: then it
// counts as interrupted).
GroupMember MemberFromRecord(const GroupIndex& index, const GroupIndex::Member& member, std::string_view record);

// Queued while every member is; running while any has not ended; else succeeded if
// every member did, or the first of failed, timed_out, interrupted, cancelled that one
// ended as.
std::string_view GroupStateName(const std::vector<GroupMember>& members);
bool GroupEnded(const std::vector<GroupMember>& members);

// Triton's cc_model_filenames, once every member has ended: compute capability ->
// engine file of each member that succeeded with one; and `engines`: engine file ->
// {"sha256", "size"} (sha256 null where unknown). Null before.
nlohmann::json GroupManifest(const std::vector<GroupMember>& members);

// GET /groups/{gid}.
nlohmann::json GroupDocument(const GroupIndex& index, const std::vector<GroupMember>& members);

}  // namespace trtwatch::builds
