#include "backends/simulated/profile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "backends/simulated/builtin_profiles.h"
#include "platform/utf8_edges.h"

namespace trtwatch::sim {

namespace {

using nlohmann::json;

constexpr int kMaxDepth = 16;
constexpr int64_t kMaxSteps = 100000;
constexpr int32_t kMaxWorkers = 64;

// Thrown inside the parser only; caught at its edge and turned into `*error`.
struct ProfileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void Fail(const std::string& where, const std::string& what) {
  throw ProfileError(where + ": " + what);
}

Range ParseRange(const json& j, const std::string& where, int64_t min, int64_t max) {
  Range r;
  if (j.is_number_integer()) {
    r.low = r.high = j.get<int64_t>();
  } else if (j.is_array() && j.size() == 2 && j[0].is_number_integer() && j[1].is_number_integer()) {
    r.low = j[0].get<int64_t>();
    r.high = j[1].get<int64_t>();
    if (r.low > r.high) Fail(where, "range [low, high] has low > high");
  } else {
    Fail(where, "expected an integer or an [low, high] pair of integers");
  }
  if (r.low < min || r.high > max) {
    Fail(where, "out of range (allowed " + std::to_string(min) + " to " + std::to_string(max) + ")");
  }
  return r;
}

void CheckKeys(const json& j, const std::string& where, std::initializer_list<const char*> known) {
  for (const auto& [key, value] : j.items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) Fail(where, "unknown field \"" + key + "\"");
  }
}

// {"build": X, "phase": Y}, each a number from 0 to 1 (either may be left out).
Variation ParseVariation(const json& j) {
  if (!j.is_object()) Fail("variation", "expected {\"build\": 0.2, \"phase\": 0.1} (numbers from 0 to 1)");
  CheckKeys(j, "variation", {"build", "phase"});
  auto part = [&](const char* key) {
    if (!j.contains(key)) return 0.0;
    const json& v = j[key];
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1) {
      Fail(std::string("variation.") + key, "expected a number from 0 (none) to 1");
    }
    return v.get<double>();
  };
  return Variation{part("build"), part("phase")};
}

PhaseSpec ParsePhase(const json& j, const std::string& where, int depth) {
  if (!j.is_object()) Fail(where, "expected an object describing a phase");
  if (depth >= kMaxDepth) Fail(where, "phases nest deeper than " + std::to_string(kMaxDepth));
  CheckKeys(j, where, {"name", "steps", "step_ms", "silent_ms", "at", "workers", "children"});
  PhaseSpec spec;
  if (!j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty()) {
    Fail(where, "\"name\" must be a non-empty string");
  }
  spec.name = j["name"].get<std::string>();
  const std::string here = where + " (\"" + spec.name + "\")";
  if (!j.contains("steps")) Fail(here, "\"steps\" is required");
  spec.steps = ParseRange(j["steps"], here + ".steps", 1, kMaxSteps);
  if (j.contains("step_ms")) spec.step_ms = ParseRange(j["step_ms"], here + ".step_ms", 0, 3600000);
  if (j.contains("silent_ms")) {
    if (!j["silent_ms"].is_object()) Fail(here + ".silent_ms", "expected an object {\"step\": ms}");
    for (const auto& [key, value] : j["silent_ms"].items()) {
      int32_t step = 0;
      try {
        step = std::stoi(key);
      } catch (...) {
        Fail(here + ".silent_ms", "key \"" + key + "\" is not a step number");
      }
      spec.silent_ms[step] = ParseRange(value, here + ".silent_ms." + key, 0, 3600000);
    }
  }
  if (j.contains("at")) {
    if (!j["at"].is_array()) Fail(here + ".at", "expected an array of parent step numbers");
    std::vector<int32_t> at;
    for (const json& s : j["at"]) {
      if (!s.is_number_integer() || s.get<int64_t>() < 0) Fail(here + ".at", "step numbers are integers >= 0");
      at.push_back(s.get<int32_t>());
    }
    spec.at = at;
  }
  if (j.contains("workers")) {
    spec.workers = static_cast<int32_t>(ParseRange(j["workers"], here + ".workers", 1, kMaxWorkers).low);
  }
  if (j.contains("children")) {
    if (!j["children"].is_array()) Fail(here + ".children", "expected an array of phases");
    for (size_t i = 0; i < j["children"].size(); ++i) {
      spec.children.push_back(
          ParsePhase(j["children"][i], here + ".children[" + std::to_string(i) + "]", depth + 1));
    }
  }
  if (spec.workers > 1) {
    // Phases active at once must have distinct names, as in TensorRT.
    for (const PhaseSpec& child : spec.children) {
      if (child.name.find("{step}") == std::string::npos) {
        Fail(here, "with \"workers\" > 1, child \"" + child.name +
                       "\" must contain {step} in its name so that concurrent phases have distinct names");
      }
    }
  }
  return spec;
}

std::optional<Profile> FindBuiltin(const std::string& name, std::string* error);

}  // namespace

std::optional<Profile> ParseProfile(const std::string& json_text, std::string* error) {
  try {
    const json j = json::parse(json_text);
    if (!j.is_object()) Fail("profile", "expected a JSON object");
    CheckKeys(j, "profile", {"name", "description", "base", "root", "failure", "variation"});
    Profile profile;
    profile.name = j.value("name", "custom");
    profile.description = j.value("description", "");
    profile.source = json_text;
    if (j.contains("root") == j.contains("base")) {
      Fail("profile", "give either \"root\" (the top-level phase) or \"base\" (a built-in profile's name)");
    }
    if (j.contains("root")) {
      profile.root = ParsePhase(j["root"], "root", 0);
    } else {
      const std::string base = j["base"].is_string() ? j["base"].get<std::string>() : "";
      const std::optional<Profile> parent = FindBuiltin(base, error);
      if (!parent) Fail("base", "\"" + base + "\" is not a built-in profile");
      profile.root = parent->root;
      profile.source += "\nbase: " + parent->source;
    }
    if (j.contains("failure")) {
      const json& f = j["failure"];
      if (!f.is_object() || !f.contains("phase") || !f["phase"].is_string()) {
        Fail("failure", "expected {\"phase\": NAME, \"step\": N, \"message\": TEXT}");
      }
      CheckKeys(f, "failure", {"phase", "step", "message"});
      FailureSpec failure;
      failure.phase = f["phase"].get<std::string>();
      failure.step = static_cast<int32_t>(ParseRange(f.value("step", json(0)), "failure.step", 0, kMaxSteps).low);
      failure.message = f.value("message", "simulated failure in \"" + failure.phase + "\"");
      profile.failure = failure;
    }
    if (j.contains("variation")) profile.variation = ParseVariation(j["variation"]);
    return profile;
  } catch (const json::exception& e) {
    *error = std::string("not valid JSON: ") + e.what();
  } catch (const ProfileError& e) {
    *error = e.what();
  }
  return std::nullopt;
}

namespace {

std::optional<Profile> FindBuiltin(const std::string& name, std::string* error) {
  for (const BuiltinProfile& p : BuiltinProfiles()) {
    if (name == p.name) return ParseProfile(std::string(p.json), error);
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> BuiltinProfileNames() {
  std::vector<std::string> names;
  for (const BuiltinProfile& p : BuiltinProfiles()) names.emplace_back(p.name);
  return names;
}

std::optional<Profile> LoadProfile(const std::string& name_or_path, std::string* error) {
  if (std::optional<Profile> builtin = FindBuiltin(name_or_path, error)) return builtin;
  std::FILE* file = OpenFile(name_or_path, "rb");
  if (file == nullptr) {
    std::string names;
    for (const std::string& n : BuiltinProfileNames()) names += (names.empty() ? "" : ", ") + n;
    *error = "unknown profile \"" + name_or_path + "\": not a built-in profile (" + names +
             ") and no such file. Give a built-in name or the path of a JSON profile (docs/simulator.md)";
    return std::nullopt;
  }
  std::string text;
  char buffer[65536];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) text.append(buffer, n);
  const bool failed = std::ferror(file) != 0;
  const int saved = errno;
  std::fclose(file);
  if (failed) {
    *error = "cannot read the profile \"" + name_or_path + "\": " + std::strerror(saved);
    return std::nullopt;
  }
  std::optional<Profile> profile = ParseProfile(text, error);
  if (!profile) *error = name_or_path + ": " + *error;
  return profile;
}

}  // namespace trtwatch::sim
