// The key recipe of a TensorRT build (docs/cache.md, "What the key holds"): the
// model's bytes and its external-data files, the plugin libraries' bytes, every
// option that changes the engine (after ResolveBuildOptions: trtexec's aliases are
// one option, and every default is written out, so `--builderOptimizationLevel=3`
// and nothing at all are one key), the shapes of each profile, TensorRT's run-time
// version as loaded, and the GPU's name and compute capability, relaxed exactly as
// TensorRT says hardware-compatible engines relax them.
//
// Deliberately not in it: paths (the bytes are), the engine's and the timing cache's
// file, the timing cache's contents and flags (they change which tactics win, not
// whether the engine is valid), builder threads, --device's number (the GPU's facts
// are), verbosity, the driver version.
//
// Compiled with the TensorRT options (no TensorRT header). Pure functions.
#pragma once

#include <string>

#include <trtwatch/result.h>

#include "backends/tensorrt/build_options.h"
#include "keys/build_key.h"

namespace trtwatch::keys {

// What the engine is built for: TensorRT as loaded and the builder's GPU.
struct TensorRtTarget {
  std::string runtime_version;         // "10.3.0": getInferLibVersion(), not the headers'
  std::string gpu_name;                // "NVIDIA H100 80GB HBM3"
  std::string gpu_compute_capability;  // "9.0"
};

// From build_start's facts (tensorrt_version, gpu, gpu_compute_capability); a fact
// that is missing stays empty.
TensorRtTarget TargetFromFacts(const Facts& facts);

// Options already through ResolveBuildOptions; the model's external data is read
// from the model. An error names what is unknown (the GPU, TensorRT) or unreadable.
RecipeOutcome TensorRtKeyRecipe(const trt::BuildOptions& options, const TensorRtTarget& target);

}  // namespace trtwatch::keys
