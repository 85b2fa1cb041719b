#include "cli/tensorrt_flags.h"

namespace trtwatch {

void AddTensorRtFlags(CLI::App* build, BuildCommandOptions* options) {
  trt::RawBuildFlags& f = options->tensorrt;
  const std::string group = "TensorRT (trtexec names)";
  auto add = [&](const std::string& name, std::string& value, const std::string& help) {
    build->add_option(name, value, help)->group(group);
  };
  auto flag = [&](const std::string& name, bool& value, const std::string& help) {
    build->add_flag(name, value, help)->group(group);
  };
  add("--onnx", options->model, "The ONNX model (same as the positional MODEL)");
  add("--saveEngine", options->output, "Where to write the engine (same as -o)");
  flag("--fp16", f.fp16, "Allow FP16 kernels (TensorRT 9/10; weakly typed networks)");
  flag("--bf16", f.bf16, "Allow BF16 kernels (TensorRT 9/10; weakly typed networks)");
  flag("--int8", f.int8, "Allow INT8 kernels (TensorRT 9/10; weakly typed networks)");
  flag("--stronglyTyped", f.strongly_typed, "Strongly typed network: types come from the model");
  // One value per occurrence, so that a following MODEL is not swallowed.
  build->add_option("--memPoolSize", f.mem_pool_size, "workspace:N[B|K|M|G] (MiB if no unit), e.g. workspace:4G")
      ->allow_extra_args(false)
      ->group(group);
  add("--workspace", f.workspace, "Workspace size in MiB (older spelling of --memPoolSize=workspace:N)");
  add("--builderOptimizationLevel", f.builder_optimization_level, "0..5: higher tries more tactics, builds longer");
  add("--maxAuxStreams", f.max_aux_streams, "Auxiliary streams the engine may use (>= 0)");
  add("--maxThreads", f.max_threads, "Builder threads (IBuilder::setMaxThreads, >= 1)");
  add("--minShapes", f.min_shapes, "Dynamic shapes, smallest: input:1x3x224x224,other:1x128");
  add("--optShapes", f.opt_shapes, "Dynamic shapes to tune for (min/max default to these)");
  add("--maxShapes", f.max_shapes, "Dynamic shapes, largest");
  flag("--verbose", f.verbose, "Show TensorRT's info and verbose log lines too");
  add("--timing-cache,--timingCacheFile", f.timing_cache,
      "Timing cache FILE: loaded if present, saved (atomically) after the build");
  flag("--timing-cache-ignore-mismatch", f.timing_cache_ignore_mismatch,
       "Use (or replace) a timing cache made on another GPU/TensorRT");
  flag("--noBuilderCache", f.no_builder_cache, "Disable the builder's timing cache (kDISABLE_TIMING_CACHE)");
  flag("--errorOnTimingCacheMiss", f.error_on_timing_cache_miss,
       "Fail when a tactic is not in the timing cache (kERROR_ON_TIMING_CACHE_MISS)");
}

}  // namespace trtwatch
