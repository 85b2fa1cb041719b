// What a build is (BuildInfo) and what a backend reports back (BuildOutcome). What
// trtwatch concludes (BuildResult) is public: <trtwatch/result.h>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <trtwatch/result.h>

namespace trtwatch {

struct BuildInfo {
  std::string build_id;
  std::string backend;  // "tensorrt" | "simulated" | "replay"
  std::string model;
  Facts facts;
  CacheUse cache;  // the build key and the cache's answer, when the caller has them
};

// What the backend's build call returned. A cancelled TensorRT build looks like a
// failed one here; the monitor's cancellation record tells them apart.
struct BuildOutcome {
  bool engine_built = false;
  std::string error;
};

}  // namespace trtwatch
