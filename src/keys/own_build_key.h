// The key recipe of a build in the caller's own code (the library's and Python's
// EngineCache, docs/cache.md "Around your own build code"): the model files' bytes
// (an ONNX model's external-data files too), the caller's option strings in their
// order, named extra values, TensorRT's run-time version and the GPU's name and
// compute capability, under the same part names as a TensorRT build's key where they
// mean the same (tensorrt.runtime, gpu.*), so that history finds similar GPUs alike.
//
// Pure functions of their arguments and the models' files.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "keys/build_key.h"

namespace trtwatch::keys {

// What the backend part says: keys of the caller's builds never meet the CLI's.
inline constexpr const char* kOwnBuildBackend = "own build code";

struct OwnBuild {
  std::vector<std::string> models;
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> extra;
  std::string tensorrt_version;
  std::string gpu_name;
  std::string gpu_compute_capability;
};

// An error names what is missing (the TensorRT version, the GPU) or unreadable.
RecipeOutcome OwnBuildKeyRecipe(const OwnBuild& build);

// The recipe of a key from the caller's own text.
KeyRecipe TextKeyRecipe(const std::string& text);

}  // namespace trtwatch::keys
