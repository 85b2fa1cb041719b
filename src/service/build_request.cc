#include "service/build_request.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "backends/simulated/builtin_profiles.h"
#include "runner/duration.h"
#include "service/model_paths.h"

namespace trtwatch::service {

namespace {

using nlohmann::json;

bool Fail(std::string* error, std::string message) {
  *error = std::move(message);
  return false;
}

std::string ProfileNames() {
  std::string names;
  for (const auto& p : sim::BuiltinProfiles()) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

bool ValidOptionName(const std::string& name) {
  if (name.empty() || name.size() > 64 || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return false;
  }
  return true;
}

// Flags the service sets itself; a request may not override them.
const std::set<std::string>& ReservedOptions() {
  static const std::set<std::string> names = {"progress", "events", "trace", "output", "o", "simulate", "seed",
                                              "speed", "timeout", "kill-after", "color", "help", "version"};
  return names;
}

}  // namespace

bool ParseBuildRequest(std::string_view body, const std::vector<std::string>& model_roots, BuildRequest* request,
                       std::string* error) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return Fail(error, "the body must be a JSON object, e.g. {\"simulate\": \"small-cnn\"} or "
                       "{\"model\": \"resnet50.onnx\"}");
  }
  static const std::set<std::string> known = {"model", "options", "simulate", "seed", "speed", "timeout"};
  for (const auto& [key, value] : j.items()) {
    if (!known.count(key)) {
      return Fail(error, "unknown field \"" + key + "\"; the fields are model, options, simulate, seed, speed, timeout");
    }
  }
  BuildRequest r;
  json normal = json::object();
  const bool has_model = j.contains("model");
  const bool has_simulate = j.contains("simulate");
  if (has_model == has_simulate) {
    return Fail(error, "give exactly one of \"model\" (an .onnx path inside a model root) or \"simulate\" "
                       "(a profile: " + ProfileNames() + ")");
  }
  if (has_simulate) {
    if (!j["simulate"].is_string()) return Fail(error, "\"simulate\" must be a profile name: " + ProfileNames());
    r.simulate = j["simulate"].get<std::string>();
    bool found = false;
    for (const auto& p : sim::BuiltinProfiles()) found = found || p.name == r.simulate;
    if (!found) return Fail(error, "unknown simulation profile \"" + r.simulate + "\"; use one of " + ProfileNames());
    if (j.contains("options")) return Fail(error, "\"options\" apply to real builds only; leave them out with \"simulate\"");
    if (j.contains("seed")) {
      if (!j["seed"].is_number_unsigned()) return Fail(error, "\"seed\" must be a non-negative integer");
      r.seed = j["seed"].get<uint64_t>();
    }
    if (j.contains("speed")) {
      if (!j["speed"].is_number()) return Fail(error, "\"speed\" must be a number between 0.01 and 1000");
      r.speed = j["speed"].get<double>();
      if (!(r.speed >= 0.01 && r.speed <= 1000)) {
        return Fail(error, "\"speed\" must be a number between 0.01 and 1000");
      }
    }
    normal["simulate"] = r.simulate;
    normal["seed"] = r.seed;
    normal["speed"] = r.speed;
  } else {
    if (j.contains("seed") || j.contains("speed")) {
      return Fail(error, "\"seed\" and \"speed\" apply to simulated builds only; leave them out with \"model\"");
    }
    if (!j["model"].is_string()) return Fail(error, "\"model\" must be a path string to an .onnx file");
    r.model = j["model"].get<std::string>();
    if (!ResolveModelPath(r.model, model_roots, &r.resolved_model, error)) return false;
    normal["model"] = r.model;
    json options = json::object();
    if (j.contains("options")) {
      if (!j["options"].is_object()) return Fail(error, "\"options\" must be an object like {\"fp16\": true}");
      for (const auto& [key, value] : j["options"].items()) {
        if (!ValidOptionName(key) || ReservedOptions().count(key)) {
          return Fail(error, "option \"" + key + "\" is not allowed; options are `trtwatch build` flags without "
                             "dashes (e.g. \"fp16\"), and the service sets progress, output and timeout itself");
        }
        if (value.is_boolean()) {
          if (value.get<bool>()) r.options.emplace_back(key, "");
        } else if (value.is_number()) {
          r.options.emplace_back(key, value.dump());
        } else if (value.is_string()) {
          const std::string s = value.get<std::string>();
          if (s.empty() || s[0] == '-' || s.find('\0') != std::string::npos || s.size() > 4096) {
            return Fail(error, "option \"" + key + "\" has a value that is empty, starts with '-' or is too long");
          }
          r.options.emplace_back(key, s);
        } else {
          return Fail(error, "option \"" + key + "\" must be a boolean, number or string");
        }
        options[key] = value;
      }
    }
    normal["options"] = options;
  }
  if (j.contains("timeout")) {
    const json& t = j["timeout"];
    std::string text = t.is_string() ? t.get<std::string>() : t.is_number() ? t.dump() : std::string();
    double seconds = 0;
    std::string why;
    if (text.empty() || !ParseDuration(text, &seconds, &why)) {
      return Fail(error, "\"timeout\": " + (why.empty() ? std::string("must be a duration like \"30m\"") : why));
    }
    r.timeout = text;
    normal["timeout"] = text;
  }
  r.json = normal.dump();
  *request = std::move(r);
  return true;
}

std::vector<std::string> WorkerArguments(const BuildRequest& r, const std::string& engine_path) {
  std::vector<std::string> args = {"build"};
  if (!r.simulate.empty()) {
    args.insert(args.end(), {"--simulate", r.simulate, "--seed", std::to_string(r.seed), "--speed"});
    char speed[32];
    std::snprintf(speed, sizeof speed, "%.17g", r.speed);
    args.emplace_back(speed);
  } else {
    args.insert(args.end(), {r.resolved_model, "-o", engine_path});
    for (const auto& [flag, value] : r.options) {
      args.push_back("--" + flag);
      if (!value.empty()) args.push_back(value);
    }
  }
  if (!r.timeout.empty()) args.insert(args.end(), {"--timeout", r.timeout});
  args.insert(args.end(), {"--progress", "json"});
  return args;
}

}  // namespace trtwatch::service
