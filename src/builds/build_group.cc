#include "builds/build_group.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "builds/build_request.h"  // kUploadedModelPrefix
#include "platform/sha256.h"
#include "protocol/json_body.h"
#include "protocol/utf8.h"

namespace trtwatch::builds {

namespace {

using nlohmann::json;

GroupRequestResult InvalidGroup(std::string error) {
  GroupRequestResult r;
  r.outcome = GroupRequestResult::Outcome::kInvalid;
  r.error = std::move(error);
  return r;
}

std::string TargetShown(std::string_view s) { return "\"" + ValidBoundedText(s, 80) + "\""; }

bool IsEngineNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

// "models/resnet50.onnx" -> "resnet50"; "models:resnet50" -> "resnet50".
std::string GroupModelStem(std::string_view model) {
  if (model.starts_with(kUploadedModelPrefix)) model.remove_prefix(kUploadedModelPrefix.size());
  if (const size_t slash = model.find_last_of("/\\"); slash != std::string_view::npos) model.remove_prefix(slash + 1);
  if (const size_t dot = model.rfind('.'); dot != std::string_view::npos && dot > 0) model = model.substr(0, dot);
  return std::string(model.empty() ? std::string_view("model") : model);
}

// "9.0" -> "90", "10.0" -> "100".
std::string SmOfCapability(std::string_view cc) {
  std::string digits;
  for (char c : cc) {
    if (c != '.') digits += c;
  }
  return digits;
}

const char kGroupTargetsRule[] =
    "\"targets\" must be a list of 1 to 16 distinct GPU type names of this service, e.g. "
    "{\"model\": \"resnet50.onnx\", \"targets\": [\"h200\", \"a100\", \"l4\"]}";

}  // namespace

GroupRequestResult ParseGroupRequest(const JsonBody& body, const GpuTable& table) {
  if (body.outcome != JsonBody::Outcome::kOk || !body.value.is_object() || !body.value.contains("targets")) {
    return {};  // the single build's checks say what is wrong, if anything
  }
  const json& j = body.value;
  if (j.contains("gpu")) {
    return InvalidGroup("give \"targets\" or \"gpu\", not both: each target is already a GPU type (leave \"gpu\" out)");
  }
  const json& targets = j["targets"];
  if (!targets.is_array() || targets.empty() || targets.size() > kMaxGroupTargets) return InvalidGroup(kGroupTargetsRule);
  const bool real = j.contains("model");
  GroupRequestResult r;
  r.outcome = GroupRequestResult::Outcome::kGroup;
  r.request.model = j.contains("model") && j["model"].is_string()       ? j["model"].get<std::string>()
                    : j.contains("simulate") && j["simulate"].is_string() ? j["simulate"].get<std::string>()
                                                                          : std::string();
  std::set<std::string> seen;
  std::map<std::string, std::string> capabilities;  // of the targets so far -> the target
  for (const json& target : targets) {
    const GpuNeedResult need = ParseGpuNeed(json{{"type", target}});
    if (!need.need) return InvalidGroup(kGroupTargetsRule);
    const std::string& name = need.need->type;
    if (!seen.insert(name).second) return InvalidGroup("target " + TargetShown(name) + " is named twice; " + kGroupTargetsRule);
    const GpuRoute route = table.Route(*need.need);
    if (!route.type) {
      return InvalidGroup(table.empty() ? "unknown target " + TargetShown(name) +
                                         ": this service routes no GPU types; start it with --gpu-type "
                                         "NAME=gres:TYPE,cc=MAJOR.MINOR (docs/slurm.md)"
                                   : "unknown target " + TargetShown(name) + "; this service knows " + table.Names());
    }
    if (real && route.type->compute_capability.empty()) {
      return InvalidGroup("target " + TargetShown(name) +
                     " has no compute capability in this service's GPU table, and a group names each engine by it; "
                     "give it one, e.g. --gpu-type " + name + "=gres:" + name + ",cc=MAJOR.MINOR");
    }
    const std::string& cc = route.type->compute_capability;
    if (real && !capabilities.emplace(cc, name).second) {
      return InvalidGroup("targets " + TargetShown(capabilities[cc]) + " and " + TargetShown(name) + " share compute capability " + cc +
                     ", and Triton's cc_model_filenames maps each capability to one engine; keep one of them");
    }
    json member = j;
    member.erase("targets");
    member["gpu"] = GpuNeedJson(*need.need);
    r.request.members.push_back({name, route.type->compute_capability, std::move(member)});
  }
  return r;
}

std::string GroupMemberBuildId(std::string_view gid, size_t index) {
  return "b_" + HexOf(Sha256Of(std::string(gid) + "/" + std::to_string(index))).substr(0, 32);
}

std::string GroupModelOfRequest(std::string_view request_json) {
  const json j = json::parse(request_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return "";
  for (const char* key : {"model", "simulate"}) {
    if (j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  }
  return "";
}

std::string GroupEngineName(std::string_view model, std::string_view target, std::string_view compute_capability) {
  std::string name = GroupModelStem(model) + "." + std::string(target) + ".sm" + SmOfCapability(compute_capability) + ".engine";
  for (char& c : name) {
    if (!IsEngineNameChar(c)) c = '_';
  }
  return name;
}

GroupMember MemberFromRecord(const GroupIndex& index, const GroupIndex::Member& member, std::string_view record) {
  GroupMember m{member.target, member.build, BuildState::kInterrupted, member.compute_capability, "", "", 0};
  BuildRecord r;
  if (record.empty() || !RecordFromJson(record, &r)) return m;
  m.state = r.state;
  if (r.state == BuildState::kSucceeded && !r.engine.empty() && !m.compute_capability.empty()) {
    m.engine_name = GroupEngineName(index.model, m.target, m.compute_capability);
    m.engine_sha256 = r.engine_sha256;
    m.engine_bytes = r.engine_bytes.value_or(0);
  }
  return m;
}

bool GroupEnded(const std::vector<GroupMember>& members) {
  return std::all_of(members.begin(), members.end(), [](const GroupMember& m) { return IsFinal(m.state); });
}

std::string_view GroupStateName(const std::vector<GroupMember>& members) {
  const auto all = [&](auto pred) { return std::all_of(members.begin(), members.end(), pred); };
  if (all([](const GroupMember& m) { return m.state == BuildState::kQueued; })) return "queued";
  if (!GroupEnded(members)) {
    const bool cancelling = std::any_of(members.begin(), members.end(),
                                        [](const GroupMember& m) { return m.state == BuildState::kCancelling; });
    const bool running = std::any_of(members.begin(), members.end(),
                                     [](const GroupMember& m) { return m.state == BuildState::kRunning; });
    // Cancelling while members stop and none builds on; otherwise running.
    return cancelling && !running ? "cancelling" : "running";
  }
  for (const BuildState worst :
       {BuildState::kFailed, BuildState::kTimedOut, BuildState::kInterrupted, BuildState::kCancelled}) {
    if (std::any_of(members.begin(), members.end(), [&](const GroupMember& m) { return m.state == worst; })) {
      return BuildStateName(worst);
    }
  }
  return "succeeded";
}

json GroupManifest(const std::vector<GroupMember>& members) {
  if (!GroupEnded(members)) return nullptr;
  json files = json::object();
  json engines = json::object();
  for (const GroupMember& m : members) {
    if (m.engine_name.empty()) continue;
    files[m.compute_capability] = m.engine_name;
    engines[m.engine_name] = {{"sha256", m.engine_sha256.empty() ? json(nullptr) : json(m.engine_sha256)},
                              {"size", m.engine_bytes}};
  }
  return {{"cc_model_filenames", files}, {"engines", engines}};
}

json GroupDocument(const GroupIndex& index, const std::vector<GroupMember>& members) {
  json targets = json::array();
  json shown = json::array();
  for (const GroupMember& m : members) {
    targets.push_back(m.target);
    shown.push_back({{"target", m.target},
                     {"build", m.build},
                     {"state", BuildStateName(m.state)},
                     {"compute_capability", m.compute_capability.empty() ? json(nullptr) : json(m.compute_capability)},
                     {"engine_name", m.engine_name.empty() ? json(nullptr) : json(m.engine_name)}});
  }
  return {{"id", index.id},
          {"created_at", FormatTime(index.created_at)},
          {"state", GroupStateName(members)},
          {"model", index.model.empty() ? json(nullptr) : json(index.model)},
          {"targets", targets},
          {"members", shown},
          {"manifest", GroupManifest(members)}};
}

}  // namespace trtwatch::builds
