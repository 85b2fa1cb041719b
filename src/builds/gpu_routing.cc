#include "builds/gpu_routing.h"

#include <algorithm>
#include <cctype>

#include "protocol/utf8.h"

namespace trtwatch::builds {

namespace {

using nlohmann::json;

constexpr size_t kMaxNameLength = 32;
constexpr size_t kMaxSlurmNameLength = 64;

bool IsGpuTypeChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'; }
bool IsName(std::string_view s, size_t max) {
  return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), IsGpuTypeChar);
}
bool IsDigits(std::string_view s) {
  return !s.empty() && s.size() <= 2 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
// "9.0", "12.1".
bool IsComputeCapability(std::string_view s) {
  const size_t dot = s.find('.');
  return dot != std::string_view::npos && IsDigits(s.substr(0, dot)) && IsDigits(s.substr(dot + 1));
}
std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
std::string Shown(std::string_view s) { return "\"" + ValidBoundedText(s, 80) + "\""; }

const char kNeedRule[] =
    "\"gpu\" must be an object with one of \"type\" (a GPU type of this service, e.g. {\"type\": \"h200\"}) or "
    "\"compute_capability\" (e.g. {\"compute_capability\": \"9.0\"})";
const char kTypeRule[] =
    "write --gpu-type NAME=gres:TYPE or NAME=feature:FEATURE, optionally with ,cc=MAJOR.MINOR "
    "(e.g. h200=gres:h200,cc=9.0); names are letters, digits, '.', '_' and '-'";

// "gres:h200,cc=9.0" -> the type's Slurm side and compute capability.
std::string ParseSpec(std::string_view spec, GpuType* type) {
  const size_t comma = spec.find(',');
  if (comma != std::string_view::npos) {
    const std::string_view cc = spec.substr(comma + 1);
    if (!cc.starts_with("cc=") || !IsComputeCapability(cc.substr(3))) return "bad ,cc=: " + std::string(kTypeRule);
    type->compute_capability = std::string(cc.substr(3));
    spec = spec.substr(0, comma);
  }
  const size_t colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const std::string_view value = colon == std::string_view::npos ? std::string_view() : spec.substr(colon + 1);
  if ((kind != "gres" && kind != "feature") || !IsName(value, kMaxSlurmNameLength)) return kTypeRule;
  (kind == "gres" ? type->gres : type->feature) = std::string(value);
  return "";
}

std::string TypeFromFlag(std::string_view flag, GpuType* type) {
  const size_t eq = flag.find('=');
  if (eq == std::string_view::npos || !IsName(flag.substr(0, eq), kMaxNameLength)) return kTypeRule;
  type->name = Lower(flag.substr(0, eq));
  return ParseSpec(flag.substr(eq + 1), type);
}

std::string TypeFromJson(const std::string& name, const json& entry, GpuType* type) {
  const char rule[] =
      "each entry must be \"NAME\": {\"gres\": \"TYPE\"} or {\"feature\": \"FEATURE\"}, optionally with "
      "\"compute_capability\": \"MAJOR.MINOR\"";
  if (!IsName(name, kMaxNameLength) || !entry.is_object()) return rule;
  for (const auto& [key, value] : entry.items()) {
    if (key != "gres" && key != "feature" && key != "compute_capability") return rule;
    if (!value.is_string()) return rule;
  }
  type->name = Lower(name);
  type->gres = entry.value("gres", "");
  type->feature = entry.value("feature", "");
  type->compute_capability = entry.value("compute_capability", "");
  const std::string& slurm_name = type->gres.empty() ? type->feature : type->gres;
  if (type->gres.empty() == type->feature.empty() || !IsName(slurm_name, kMaxSlurmNameLength)) return rule;
  if (!type->compute_capability.empty() && !IsComputeCapability(type->compute_capability)) return rule;
  return "";
}

// The words of a GPU's name, lower case: "NVIDIA H200-SXM" -> nvidia, h200, sxm.
std::vector<std::string> NameWords(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

std::string CapabilityOf(const CudaDevice& d) { return std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor); }

bool Meets(const CudaDevice& device, const std::string& type, const std::string& capability) {
  if (!capability.empty()) return CapabilityOf(device) == capability;
  const std::vector<std::string> words = NameWords(device.name);
  return std::find(words.begin(), words.end(), type) != words.end();
}

std::string HostGpus(const std::vector<CudaDevice>& devices) {
  std::string text;
  for (const CudaDevice& d : devices) {
    text += (text.empty() ? "" : ", ") + std::to_string(d.ordinal) + ": " + ValidBoundedText(d.name, 80) + " (" +
            CapabilityOf(d) + ")";
  }
  return text;
}

}  // namespace

std::string GpuNeed::Describe() const {
  return type.empty() ? "compute capability " + compute_capability : "GPU type " + type;
}

GpuNeedResult ParseGpuNeed(const json& value) {
  GpuNeedResult r;
  if (!value.is_object() || value.size() != 1) {
    r.error = kNeedRule;
    return r;
  }
  const json* type = value.contains("type") ? &value["type"] : nullptr;
  const json* capability = value.contains("compute_capability") ? &value["compute_capability"] : nullptr;
  GpuNeed need;
  if (type && type->is_string() && IsName(type->get<std::string>(), kMaxNameLength)) {
    need.type = Lower(type->get<std::string>());
  } else if (capability && capability->is_string() && IsComputeCapability(capability->get<std::string>())) {
    need.compute_capability = capability->get<std::string>();
  } else {
    r.error = kNeedRule;
    return r;
  }
  r.need = need;
  return r;
}

json GpuNeedJson(const GpuNeed& need) {
  return need.type.empty() ? json{{"compute_capability", need.compute_capability}} : json{{"type", need.type}};
}

GpuTableResult GpuTable::Parse(const std::vector<std::string>& flags, std::string_view json_file_text) {
  GpuTableResult r;
  for (const std::string& flag : flags) {
    GpuType type;
    std::string error = TypeFromFlag(flag, &type);
    if (error.empty()) error = r.table.Add(std::move(type));
    if (!error.empty()) {
      r.error = "--gpu-type " + Shown(flag) + ": " + error;
      return r;
    }
  }
  if (json_file_text.empty()) return r;
  const json file = json::parse(json_file_text, nullptr, false);
  if (!file.is_object()) {
    r.error = "--gpu-types: the file must hold a JSON object like {\"h200\": {\"gres\": \"h200\"}}";
    return r;
  }
  for (const auto& [name, entry] : file.items()) {
    GpuType type;
    std::string error = TypeFromJson(name, entry, &type);
    if (error.empty()) error = r.table.Add(std::move(type));
    if (!error.empty()) {
      r.error = "--gpu-types: entry " + Shown(name) + ": " + error;
      return r;
    }
  }
  return r;
}

std::string GpuTable::Add(GpuType type) {
  for (const GpuType& t : types_) {
    if (t.name == type.name) return "the GPU type \"" + type.name + "\" is named twice; give each name once";
  }
  types_.push_back(std::move(type));
  return "";
}

GpuRoute GpuTable::Route(const GpuNeed& need) const {
  GpuRoute route;
  for (const GpuType& t : types_) {
    if (need.type.empty() ? t.compute_capability == need.compute_capability : t.name == need.type) {
      route.type = t;
      return route;
    }
  }
  route.error = types_.empty() ? "this service routes no GPU types, so it cannot give a build the " + need.Describe() +
                                     " it asks for; start it with --gpu-type NAME=gres:TYPE (docs/slurm.md)"
                               : "no " + need.Describe() + " here; this service knows " + Names() +
                                     " (add more with --gpu-type NAME=gres:TYPE,cc=MAJOR.MINOR)";
  return route;
}

std::string GpuTable::Names() const {
  std::string text;
  for (const GpuType& t : types_) {
    text += (text.empty() ? "" : ", ") + t.name;
    if (!t.compute_capability.empty()) text += " (" + t.compute_capability + ")";
  }
  return text;
}

std::vector<std::string> SlurmGpuArguments(const GpuType& type) {
  if (!type.gres.empty()) return {"--gres=gpu:" + type.gres + ":1"};
  return {"--gres=gpu:1", "--constraint=" + type.feature};
}

bool LocalGpuMeets(const GpuNeed& need, const GpuTable& table, const CudaDevice& device) {
  std::string capability = need.compute_capability;
  if (!need.type.empty()) {
    const GpuRoute known = table.Route(need);
    if (known.type) capability = known.type->compute_capability;
  }
  return Meets(device, need.type, capability);
}

LocalGpuRoute RouteToLocalGpu(const GpuNeed& need, const GpuTable& table, const std::vector<CudaDevice>& devices) {
  LocalGpuRoute route;
  for (const CudaDevice& d : devices) {
    if (LocalGpuMeets(need, table, d)) {
      route.ordinal = d.ordinal;
      return route;
    }
  }
  route.error = "this host has no GPU of " + need.Describe() +
                (devices.empty() ? std::string("; CUDA sees no GPU here") : "; its GPUs: " + HostGpus(devices));
  return route;
}

}  // namespace trtwatch::builds
