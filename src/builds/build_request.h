// BuildRequest: the body of POST /builds, checked, and the worker command it becomes.
//
// Threading: pure functions (the model check reads the file system).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "builds/gpu_routing.h"
#include "core/result.h"
#include "protocol/json_body.h"

namespace trtwatch::builds {

struct BuildRequest {
  std::string simulate;  // built-in profile name; empty for a real build
  uint64_t seed = 1;
  double speed = 1.0;
  std::string model;           // as the client gave it: a path, or "models:NAME" (an uploaded model)
  std::string resolved_model;  // canonical path inside a model root
  // Options of a real build, as `trtwatch build` flags: {"fp16": true} -> --fp16,
  // {"workspace": "4G"} -> --workspace 4G. Value empty for a bare flag; paths resolved.
  std::vector<std::pair<std::string, std::string>> options;
  std::string timeout;  // as given ("30m"); empty for none
  bool cache = true;    // "cache": false: build even when the engine cache has the engine
  // "timing_cache": false: not given the fleet's timing cache (nor merged into it). A
  // request whose options name a timing cache (or --noBuilderCache) uses that instead.
  bool timing_cache = true;
  GpuNeed gpu;          // "gpu": {"type": "h200"} or {"compute_capability": "9.0"}; empty: any
  std::string json;     // the request, normalised, as stored in the record
  // Who submitted it: the caller's name as the front end authenticated it (the
  // service's users); empty where no credentials are asked for. Not part of `json`.
  std::string submitted_by;

  // Whether the build is given the fleet's timing cache of its GPU, if there is a fleet.
  bool UsesFleetTimingCache() const;
};

// Where a request's files may be: models inside a model root; files the build writes
// (timing caches) inside a model root or the data dir, relative ones under
// DATA_DIR/caches. All canonical.
struct RequestPaths {
  std::vector<std::string> model_roots;
  std::string data_dir;  // empty: no writable place besides the model roots
  std::string models_dir;  // uploaded models (ArtifactStore::models_dir); empty: none
  std::vector<std::string> writable_roots() const;
  std::string default_cache_dir() const { return data_dir.empty() ? std::string() : data_dir + "/caches"; }
};

// "model": "models:NAME" names the model uploaded as NAME (builds/artifacts/artifact_store.h).
inline constexpr std::string_view kUploadedModelPrefix = "models:";

// Checks a request: a client's body as ParseJsonBody read it (once, at the front end),
// or a stored record's request. Options come from an explicit list of build options
// (unknown ones are refused by name); paths among them are confined. A failure names
// the problem and the fix.
Result<BuildRequest> ParseBuildRequest(const JsonBody& body, const RequestPaths& paths);
// A stored record's request text (accepted by a replica, perhaps another): read once, here.
Result<BuildRequest> ParseBuildRequest(std::string_view text, const RequestPaths& paths);

// The longest grace a cancel request may ask for.
inline constexpr double kMaxCancelGraceSeconds = 3600;

// A cancel grace, read by the one rule that --cancel-grace and a cancel body's "grace"
// share: 0 (SIGKILL right after SIGTERM) or from 1 ms to 1 h, given as a duration text
// ("30s", "500ms", "0s", "0") or, in a body, as seconds (a JSON number: 30, 0.5, 0).
struct GraceResult {
  enum class Outcome { kOk, kInvalid };
  Outcome outcome = Outcome::kInvalid;
  double seconds = 0;
  std::string error;  // kInvalid: the rule and examples
};
GraceResult ParseGraceText(std::string_view text);
GraceResult GraceFromSeconds(double seconds);

// The body of POST /builds/{id}/cancel: empty, or {"grace": 5} / {"grace": "5s"}. On
// failure returns false with a message that names the problem and the fix.
bool ParseCancelBody(std::string_view body, std::optional<double>* grace, std::string* error);

// The service's folders a worker is told of.
struct WorkerFolders {
  std::string engine_cache{};    // the workers' engine cache (docs/cache.md); empty: none
  std::string history_folder{};  // the build's history folder (builds/build_history.h); empty: none
  std::string timing_caches{};   // the fleet's timing caches (ARTIFACT_DIR/timing-caches); empty: none
  uint64_t timing_cache_max_bytes = 0;  // their bound (0: none)
};

// The arguments after "trtwatch": `build ... --progress json`. Real builds write
// their engine to `engine_path`. A real build uses the engine cache unless its request
// said "cache": false; every build is given its GPU's fleet timing cache (`--timing-cache
// auto --timing-cache-dir`) unless UsesFleetTimingCache says no. Without a history
// folder the worker keeps no history (--no-history).
std::vector<std::string> WorkerArguments(const BuildRequest& request, const std::string& engine_path,
                                         const WorkerFolders& folders = {});

}  // namespace trtwatch::builds
