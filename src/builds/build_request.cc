#include "builds/build_request.h"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "backends/simulated/builtin_profiles.h"
#include "runner/duration.h"
#include "protocol/json_body.h"
#include "builds/artifacts/model_names.h"
#include "builds/model_paths.h"

namespace trtwatch::builds {

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

// The build options a request may carry: `trtwatch build`'s TensorRT flags (trtexec
// names), nothing else. Anything that names a file is a kPath and is confined like the
// model; the service sets the engine path, progress, events and timeout itself.
enum class OptionKind { kFlag, kValue, kPath };
struct OptionSpec {
  std::string_view name;
  OptionKind kind;
};
constexpr OptionSpec kBuildOptions[] = {
    {"fp16", OptionKind::kFlag},
    {"bf16", OptionKind::kFlag},
    {"int8", OptionKind::kFlag},
    {"stronglyTyped", OptionKind::kFlag},
    {"verbose", OptionKind::kFlag},
    {"noBuilderCache", OptionKind::kFlag},
    {"errorOnTimingCacheMiss", OptionKind::kFlag},
    {"timing-cache-ignore-mismatch", OptionKind::kFlag},
    {"memPoolSize", OptionKind::kValue},
    {"workspace", OptionKind::kValue},
    {"builderOptimizationLevel", OptionKind::kValue},
    {"maxAuxStreams", OptionKind::kValue},
    {"maxThreads", OptionKind::kValue},
    {"minShapes", OptionKind::kValue},
    {"optShapes", OptionKind::kValue},
    {"maxShapes", OptionKind::kValue},
    {"timing-cache", OptionKind::kPath},
    {"timingCacheFile", OptionKind::kPath},
};
constexpr size_t kMaxOptionValue = 1024;

const OptionSpec* FindOption(std::string_view name) {
  for (const OptionSpec& o : kBuildOptions) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

// Options that give the build a timing cache of their own, or none.
bool NamesTimingCache(std::string_view option) {
  return option == "timing-cache" || option == "timingCacheFile" || option == "noBuilderCache";
}

std::string OptionNames() {
  std::string names;
  for (const OptionSpec& o : kBuildOptions) names += (names.empty() ? "" : ", ") + std::string(o.name);
  return names;
}

// One option of a real build, checked; appends the worker flag to `r->options`.
bool ParseOption(const std::string& key, const json& value, const RequestPaths& paths, BuildRequest* r,
                 std::string* error) {
  const OptionSpec* spec = FindOption(key);
  if (!spec) {
    return Fail(error, "unknown option \"" + key + "\"; the build options are " + OptionNames() +
                           " (the service sets the model, engine path, progress and timeout itself)");
  }
  if (spec->kind == OptionKind::kFlag) {
    if (!value.is_boolean()) return Fail(error, "option \"" + key + "\" is a flag: give true or false");
    if (value.get<bool>()) r->options.emplace_back(key, "");
    return true;
  }
  std::string text;
  if (value.is_number() && spec->kind == OptionKind::kValue) {
    text = value.dump();
  } else if (value.is_string()) {
    text = value.get<std::string>();
  } else {
    return Fail(error, "option \"" + key + "\" must be a " +
                           (spec->kind == OptionKind::kPath ? "path string" : "string or number"));
  }
  if (text.empty() || text[0] == '-' || text.find('\0') != std::string::npos || text.size() > kMaxOptionValue) {
    return Fail(error, "option \"" + key + "\" has a value that is empty, starts with '-' or is longer than " +
                           std::to_string(kMaxOptionValue) + " bytes");
  }
  if (spec->kind == OptionKind::kPath) {
    std::string resolved;
    if (!ResolveWritablePath(text, paths.writable_roots(), paths.default_cache_dir(), &resolved, error)) {
      *error = "option \"" + key + "\": " + *error;
      return false;
    }
    text = resolved;
  }
  r->options.emplace_back(key, text);
  return true;
}

}  // namespace

std::vector<std::string> RequestPaths::writable_roots() const {
  std::vector<std::string> roots = model_roots;
  if (!data_dir.empty()) roots.push_back(data_dir);
  return roots;
}

namespace {

// The fields of a simulated build: the profile, its seed and speed.
bool ParseSimulateFields(const json& j, BuildRequest* r, json* normal, std::string* error) {
  if (!j["simulate"].is_string()) return Fail(error, "\"simulate\" must be a profile name: " + ProfileNames());
  r->simulate = j["simulate"].get<std::string>();
  bool found = false;
  for (const auto& p : sim::BuiltinProfiles()) found = found || p.name == r->simulate;
  if (!found) return Fail(error, "unknown simulation profile \"" + r->simulate + "\"; use one of " + ProfileNames());
  if (j.contains("options")) return Fail(error, "\"options\" apply to real builds only; leave them out with \"simulate\"");
  if (j.contains("seed")) {
    if (!j["seed"].is_number_unsigned()) return Fail(error, "\"seed\" must be a non-negative integer");
    r->seed = j["seed"].get<uint64_t>();
  }
  if (j.contains("speed")) {
    if (!j["speed"].is_number()) return Fail(error, "\"speed\" must be a number between 0.01 and 1000");
    r->speed = j["speed"].get<double>();
    if (!(r->speed >= 0.01 && r->speed <= 1000)) {
      return Fail(error, "\"speed\" must be a number between 0.01 and 1000");
    }
  }
  (*normal)["simulate"] = r->simulate;
  (*normal)["seed"] = r->seed;
  (*normal)["speed"] = r->speed;
  return true;
}

// The fields of a real build: the model (a path in a root, or an uploaded one), its
// options and the cache choice.
bool ParseModelFields(const json& j, const RequestPaths& paths, BuildRequest* r, json* normal,
                      std::string* error) {
  if (j.contains("seed") || j.contains("speed")) {
    return Fail(error, "\"seed\" and \"speed\" apply to simulated builds only; leave them out with \"model\"");
  }
  if (!j["model"].is_string()) {
    return Fail(error, "\"model\" must be a path string to an .onnx file, or \"models:NAME\" for an uploaded model");
  }
  r->model = j["model"].get<std::string>();
  const bool uploaded = r->model.starts_with(kUploadedModelPrefix);
  if (uploaded ? !ResolveUploadedModel(std::string_view(r->model).substr(kUploadedModelPrefix.size()),
                                       paths.models_dir, &r->resolved_model, error)
               : !ResolveModelPath(r->model, paths.model_roots, &r->resolved_model, error)) {
    return false;
  }
  (*normal)["model"] = r->model;
  json options = json::object();
  if (j.contains("options")) {
    if (!j["options"].is_object()) return Fail(error, "\"options\" must be an object like {\"fp16\": true}");
    for (const auto& [key, value] : j["options"].items()) {
      if (!ParseOption(key, value, paths, r, error)) return false;
      options[key] = value;
    }
  }
  (*normal)["options"] = options;
  if (j.contains("cache")) {
    if (!j["cache"].is_boolean()) return Fail(error, "\"cache\" must be true or false (false: build, even on a hit)");
    r->cache = j["cache"].get<bool>();
    if (!r->cache) (*normal)["cache"] = false;
  }
  return true;
}

// The fields both kinds share: the timeout and the GPU the build needs.
bool ParseSharedFields(const json& j, BuildRequest* r, json* normal, std::string* error) {
  if (j.contains("timeout")) {
    const json& t = j["timeout"];
    std::string text = t.is_string() ? t.get<std::string>() : t.is_number() ? t.dump() : std::string();
    double seconds = 0;
    std::string why;
    if (text.empty() || !ParseDuration(text, &seconds, &why)) {
      return Fail(error, "\"timeout\": " + (why.empty() ? std::string("must be a duration like \"30m\"") : why));
    }
    r->timeout = DurationText(seconds);  // normalised: the record keeps no client text of any length
    (*normal)["timeout"] = r->timeout;
  }
  if (j.contains("timing_cache")) {
    if (!j["timing_cache"].is_boolean()) {
      return Fail(error, "\"timing_cache\" must be true or false (false: build without the fleet's timing cache)");
    }
    r->timing_cache = j["timing_cache"].get<bool>();
    if (r->timing_cache && !r->UsesFleetTimingCache()) {
      return Fail(error, "\"timing_cache\": true asks for the fleet's timing cache, but the options name a cache of "
                         "their own (or --noBuilderCache): give one or the other");
    }
    if (!r->timing_cache) (*normal)["timing_cache"] = false;
  }
  if (j.contains("gpu")) {
    const GpuNeedResult gpu = ParseGpuNeed(j["gpu"]);
    if (!gpu.need) return Fail(error, gpu.error);
    r->gpu = *gpu.need;
    (*normal)["gpu"] = GpuNeedJson(r->gpu);
  }
  return true;
}

}  // namespace

Result<BuildRequest> ParseBuildRequest(const JsonBody& body, const RequestPaths& paths) {
  if (body.outcome == JsonBody::Outcome::kDuplicateKey) return Status::Error(body.error);
  const json& j = body.value;
  if (!j.is_object()) {
    return Status::Error("the body must be a JSON object, e.g. {\"simulate\": \"small-cnn\"} or "
                         "{\"model\": \"resnet50.onnx\"}");
  }
  static const std::set<std::string> known = {"model", "options", "simulate", "seed",        "speed",
                                              "timeout", "cache",  "gpu",      "timing_cache"};
  for (const auto& [key, value] : j.items()) {
    if (!known.count(key)) {
      return Status::Error("unknown field \"" + key +
                           "\"; the fields are model, options, simulate, seed, speed, timeout, cache, gpu, "
                           "timing_cache");
    }
  }
  const bool has_model = j.contains("model");
  const bool has_simulate = j.contains("simulate");
  if (has_model == has_simulate) {
    return Status::Error("give exactly one of \"model\" (an .onnx path inside a model root) or \"simulate\" "
                         "(a profile: " + ProfileNames() + ")");
  }
  BuildRequest r;
  json normal = json::object();
  std::string error;
  const bool kind_ok = has_simulate ? ParseSimulateFields(j, &r, &normal, &error)
                                    : ParseModelFields(j, paths, &r, &normal, &error);
  if (!kind_ok || !ParseSharedFields(j, &r, &normal, &error)) return Status::Error(error);
  r.json = normal.dump();
  return r;
}

Result<BuildRequest> ParseBuildRequest(std::string_view text, const RequestPaths& paths) {
  return ParseBuildRequest(ParseJsonBody(text), paths);
}

bool BuildRequest::UsesFleetTimingCache() const {
  if (!timing_cache) return false;
  return std::none_of(options.begin(), options.end(), [](const auto& option) { return NamesTimingCache(option.first); });
}

std::vector<std::string> WorkerArguments(const BuildRequest& r, const std::string& engine_path,
                                         const WorkerFolders& folders) {
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
    if (!folders.engine_cache.empty()) {
      if (r.cache) {
        args.insert(args.end(), {"--engine-cache", folders.engine_cache});
      } else {
        args.emplace_back("--no-engine-cache");
      }
    }
  }
  if (!folders.timing_caches.empty() && r.UsesFleetTimingCache()) {
    args.insert(args.end(), {"--timing-cache", "auto", "--timing-cache-dir", folders.timing_caches});
    if (folders.timing_cache_max_bytes > 0) {
      args.insert(args.end(), {"--timing-cache-max-size", std::to_string(folders.timing_cache_max_bytes) + "B"});
    }
  }
  if (!r.timeout.empty()) args.insert(args.end(), {"--timeout", r.timeout});
  // The service keeps the history in its store; a worker reads and appends to the
  // build's own folder, never the local history of the user it runs as.
  args.insert(args.end(), {"--progress", "json"});
  if (folders.history_folder.empty()) {
    args.emplace_back("--no-history");
  } else {
    args.insert(args.end(), {"--history", folders.history_folder});
  }
  return args;
}

namespace {

GraceResult GraceRefused() {
  GraceResult r;
  r.error = "a grace must be 0 (SIGKILL right after SIGTERM) or from 1ms to 1h: a duration (\"30s\", \"500ms\", "
            "\"0s\") or, in a cancel body, seconds (30, 0.5, 0)";
  return r;
}

}  // namespace

GraceResult GraceFromSeconds(double seconds) {
  if (!(seconds == 0 || (seconds >= 1e-3 && seconds <= kMaxCancelGraceSeconds))) return GraceRefused();
  GraceResult r;
  r.outcome = GraceResult::Outcome::kOk;
  r.seconds = seconds;
  return r;
}

GraceResult ParseGraceText(std::string_view text) {
  double seconds = 0;
  std::string ignored;  // the rule says it all
  return ParseDurationOrZero(text, &seconds, &ignored) ? GraceFromSeconds(seconds) : GraceRefused();
}

bool ParseCancelBody(std::string_view body, std::optional<double>* grace, std::string* error) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return true;
  const JsonBody parsed = ParseJsonBody(body);
  if (parsed.outcome == JsonBody::Outcome::kDuplicateKey) return Fail(error, parsed.error);
  const json& j = parsed.value;
  if (!j.is_object()) {
    *error = "the cancel body must be empty or a JSON object like {\"grace\": \"30s\"}";
    return false;
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "grace") {
      *error = "unknown field \"" + key + "\" in the cancel body; the only field is grace";
      return false;
    }
  }
  if (!j.contains("grace")) return true;
  const json& g = j["grace"];
  const GraceResult r = g.is_number()   ? GraceFromSeconds(g.get<double>())
                        : g.is_string() ? ParseGraceText(g.get<std::string>())
                                        : GraceFromSeconds(-1);
  if (r.outcome != GraceResult::Outcome::kOk) return Fail(error, "\"grace\": " + r.error);
  *grace = r.seconds;
  return true;
}

}  // namespace trtwatch::builds
