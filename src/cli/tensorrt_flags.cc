#include "cli/tensorrt_flags.h"

#include <string>
#include <vector>

namespace trtwatch {

namespace {

// trtexec's options that measure inference: accepted so that a trtexec build command
// line runs unchanged, noticed in one line, not used (trtwatch only builds).
// `value`: whether the option takes one.
struct IgnoredOption {
  const char* name;
  bool value;
};
constexpr IgnoredOption kInferenceOptions[] = {
    {"--skipInference", false}, {"--iterations", true},   {"--warmUp", true},          {"--duration", true},
    {"--sleepTime", true},      {"--idleTime", true},     {"--infStreams", true},      {"--streams", true},
    {"--useCudaGraph", false},  {"--noCudaGraph", false}, {"--noDataTransfers", false}, {"--includeDataTransfers", false},
    {"--useSpinWait", false},   {"--noSpinWait", false},  {"--threads", false},        {"--separateProfileRun", false},
    {"--dumpProfile", false},   {"--dumpOutput", false},  {"--dumpLayerInfo", false},  {"--dumpRawBindingsToFile", false},
    {"--dumpOptimizationProfile", false}, {"--exportTimes", true}, {"--exportOutput", true},
    {"--exportProfile", true},  {"--exportLayerInfo", true}, {"--avgRuns", true},       {"--percentile", true},
    {"--loadInputs", true},     {"--shapes", true},       {"--useProfile", true},      {"--exposeDMA", false},
    {"--timeDeserialize", false}, {"--timeRefit", false}, {"--useManagedMemory", false},
    {"--persistentCacheRatio", true}, {"--allocationStrategy", true}, {"--weightStreamingBudget", true},
    {"--saveDebugTensors", true}, {"--avgTiming", true},
};

// trtexec options that have no meaning for a build trtwatch makes: refused with why.
struct RefusedOption {
  const char* name;
  bool value;
  const char* why;
};
constexpr RefusedOption kRefusedOptions[] = {
    {"--loadEngine", true, "trtwatch builds engines; it does not load one (use trtexec to run an engine)"},
    {"--getPlanVersionOnly", false, "trtwatch builds engines; it does not inspect one"},
    {"--safe", false, "safety-certified builds need TensorRT's safety runtime, which trtwatch does not use"},
    {"--consistency", false, "the safety consistency checker is part of TensorRT's safety runtime only"},
    {"--calib", true,
     "INT8 calibration needs a calibrator fed with data, which trtwatch does not run: quantize the model with Q/DQ "
     "nodes (explicit quantization) instead"},
    {"--inputIOFormats", true,
     "trtwatch keeps the model's input types and formats; set them in the model, or build with trtexec"},
    {"--outputIOFormats", true,
     "trtwatch keeps the model's output types and formats; set them in the model, or build with trtexec"},
    {"--layerPrecisions", true, "per-layer precisions are not supported by trtwatch yet; set them in the model"},
    {"--layerOutputTypes", true, "per-layer output types are not supported by trtwatch yet; set them in the model"},
    {"--precisionConstraints", true, "precision constraints go with --layerPrecisions, which trtwatch does not support"},
    {"--layerDeviceTypes", true, "per-layer device types are not supported by trtwatch yet"},
    {"--buildDLAStandalone", false, "standalone DLA loadables are not supported by trtwatch"},
    {"--minShapesCalib", true, "calibration profiles need --calib, which trtwatch does not support"},
    {"--optShapesCalib", true, "calibration profiles need --calib, which trtwatch does not support"},
    {"--maxShapesCalib", true, "calibration profiles need --calib, which trtwatch does not support"},
};

// The options of the "TensorRT (trtexec names)" group, added to the build command.
struct TensorRtGroup {
  CLI::App* build;
  std::string group = "TensorRT (trtexec names)";

  void add(const std::string& name, std::string& value, const std::string& help) {
    build->add_option(name, value, help)->group(group);
  }
  void flag(const std::string& name, bool& value, const std::string& help) {
    build->add_flag(name, value, help)->group(group);
  }
  // One value per occurrence, so that a following MODEL is not swallowed.
  void repeated(const std::string& name, std::vector<std::string>& values, const std::string& help) {
    build->add_option(name, values, help)->allow_extra_args(false)->group(group);
  }
};

// The model, the engine and the precisions kernels may use.
void AddPrecisionFlags(TensorRtGroup& g, BuildCommandOptions* options) {
  trt::RawBuildFlags& f = options->tensorrt;
  g.add("--onnx", options->model, "The ONNX model (same as the positional MODEL)");
  g.add("--saveEngine", options->output, "Where to write the engine (same as -o)");
  g.flag("--fp16", f.fp16, "Allow FP16 kernels (TensorRT 9/10; weakly typed networks)");
  g.flag("--bf16", f.bf16, "Allow BF16 kernels (TensorRT 9/10; weakly typed networks)");
  g.flag("--int8", f.int8, "Allow INT8 kernels (TensorRT 9/10; weakly typed networks)");
  g.flag("--fp8", f.fp8, "Allow FP8 kernels (TensorRT 9/10; weakly typed networks)");
  g.flag("--int4", f.int4, "Allow INT4 weight-only kernels (TensorRT 10; weakly typed networks)");
  g.flag("--best", f.best, "FP16 + INT8, and BF16 from Ampere on, as trtexec (TensorRT 9/10)");
  g.flag("--stronglyTyped", f.strongly_typed, "Strongly typed network: types come from the model");
  g.flag("--noTF32", f.no_tf32, "Disallow TF32 kernels (clears BuilderFlag::kTF32)");
}

// The builder's memory, effort, engine kind, DLA, device and plugins.
void AddBuilderFlags(TensorRtGroup& g, trt::RawBuildFlags& f) {
  g.repeated("--memPoolSize", f.mem_pool_size,
             "POOL:N[B|K|M|G] (MiB if no unit); POOL: workspace, dlaSRAM, dlaLocalDRAM, dlaGlobalDRAM, tacticSharedMem");
  g.add("--workspace", f.workspace, "Workspace size in MiB (older spelling of --memPoolSize=workspace:N)");
  g.add("--builderOptimizationLevel", f.builder_optimization_level, "0..5: higher tries more tactics, builds longer");
  g.add("--maxAuxStreams", f.max_aux_streams, "Auxiliary streams the engine may use (>= 0)");
  g.add("--maxThreads", f.max_threads, "Builder threads (IBuilder::setMaxThreads, >= 1; trtwatch's own option)");
  g.add("--maxTactics", f.max_tactics, "Most tactics to time per layer (TensorRT 10.4+)");
  g.add("--tilingOptimizationLevel", f.tiling_optimization_level, "0..3: tiling search effort (TensorRT 10.8+)");
  g.add("--tacticSources", f.tactic_sources, "+/-SOURCE,...: CUBLAS, CUBLAS_LT, CUDNN, EDGE_MASK_CONVOLUTIONS, JIT_CONVOLUTIONS");
  g.add("--hardwareCompatibilityLevel", f.hardware_compatibility_level, "none, ampere+ or sameComputeCapability");
  g.add("--profilingVerbosity", f.profiling_verbosity, "layer_names_only, detailed or none");
  g.flag("--versionCompatible,--vc", f.version_compatible, "Version-compatible engine (BuilderFlag::kVERSION_COMPATIBLE)");
  g.flag("--excludeLeanRuntime", f.exclude_lean_runtime, "With --versionCompatible: leave the lean runtime out");
  g.flag("--refit", f.refit, "Refittable engine (BuilderFlag::kREFIT)");
  g.flag("--stripWeights,--weightless", f.strip_weights, "Weight-stripped engine, refittable (TensorRT 10)");
  g.flag("--allowWeightStreaming", f.allow_weight_streaming, "Weight streaming (TensorRT 10; strongly typed)");
  g.flag("--noCompilationCache", f.no_compilation_cache, "Disable the compilation cache");
  g.flag("--directIO", f.direct_io, "No reformatting at the network's inputs and outputs");
  g.add("--sparsity", f.sparsity, "disable or enable (structured sparsity)");
  g.add("--useDLACore", f.use_dla_core, "Build for DLA core N");
  g.flag("--allowGPUFallback", f.allow_gpu_fallback, "With --useDLACore: layers DLA cannot run fall back to the GPU");
  g.add("--device", f.device, "The CUDA device to build on (default 0)");
  g.repeated("--staticPlugins", f.static_plugins, "Plugin library loaded into the process (its creators register)");
  g.repeated("--dynamicPlugins", f.dynamic_plugins, "Plugin library loaded through IPluginRegistry::loadLibrary");
  g.repeated("--setPluginsToSerialize", f.plugins_to_serialize, "Plugin library serialized with the engine");
}

// Shapes: plain, or in --profile=N blocks. Each shape option lands in the profile
// opened by the latest --profile, so the callbacks run in command-line order.
void AddShapeFlags(TensorRtGroup& g, trt::RawBuildFlags& f) {
  using trt::RawProfile;
  auto shapes = [&, raw = &f](const std::string& name, std::string RawProfile::*in_profile,
                              std::string trt::RawBuildFlags::*plain, const std::string& help) {
    g.build
        ->add_option_function<std::string>(
            name,
            [raw, in_profile, plain](const std::string& value) {
              std::string& target = raw->current_profile < 0 ? raw->*plain
                                                             : raw->profiles[static_cast<size_t>(raw->current_profile)].*in_profile;
              target = target.empty() ? value : target + "," + value;
            },
            help)
        ->trigger_on_parse()
        ->group(g.group);
  };
  shapes("--minShapes", &RawProfile::min_shapes, &trt::RawBuildFlags::min_shapes,
         "Dynamic shapes, smallest: input:1x3x224x224,other:1x128 (scalar for a 0-d shape)");
  shapes("--optShapes", &RawProfile::opt_shapes, &trt::RawBuildFlags::opt_shapes,
         "Dynamic shapes to tune for (missing: from max, else min, as trtexec)");
  shapes("--maxShapes", &RawProfile::max_shapes, &trt::RawBuildFlags::max_shapes, "Dynamic shapes, largest");
  g.build
      ->add_option_function<int>(
          "--profile",
          [raw = &f](int index) {
            if (index < 0 || index > 63) throw CLI::ValidationError("--profile: expected 0..63, got " + std::to_string(index));
            raw->current_profile = index;
            if (raw->profiles.size() <= static_cast<size_t>(index)) raw->profiles.resize(static_cast<size_t>(index) + 1);
          },
          "Start optimization profile N (0, 1, ...): the shape options after it belong to it")
      ->trigger_on_parse()
      ->group(g.group);
}

// The log's verbosity and the timing cache.
void AddTimingCacheFlags(TensorRtGroup& g, trt::RawBuildFlags& f) {
  g.flag("--verbose", f.verbose, "Show TensorRT's info and verbose log lines too");
  g.add("--timing-cache,--timingCacheFile", f.timing_cache,
        "Timing cache FILE: loaded if present, merged into (atomically, under a lock) after the build");
  g.flag("--timing-cache-ignore-mismatch", f.timing_cache_ignore_mismatch,
         "Use a timing cache made on another GPU/TensorRT without the warning");
  g.flag("--timing-cache-strict", f.timing_cache_strict,
         "Refuse a timing cache made on another GPU/TensorRT, or unreadable (default: warn and go on)");
  g.add("--timing-cache-dir", f.timing_cache_dir,
        "With --timing-cache auto: keep the caches in DIR (a team's shared folder) instead of the state folder");
  g.add("--timing-cache-max-size", f.timing_cache_max_size,
        "Never grow the timing cache file past SIZE (512M, 1G): a merge past it keeps the file as it was");
  g.flag("--noBuilderCache", f.no_builder_cache,
         "Disable the builder's timing cache (kDISABLE_TIMING_CACHE); a --timing-cache file is then not used");
  g.flag("--errorOnTimingCacheMiss", f.error_on_timing_cache_miss,
         "Fail when a tactic is not in the timing cache (kERROR_ON_TIMING_CACHE_MISS)");
}

void AddIgnoredInferenceFlags(CLI::App* build, trt::RawBuildFlags& f) {
  const std::string ignored_group = "trtexec inference options (accepted, not used: trtwatch only builds)";
  for (const IgnoredOption& option : kInferenceOptions) {
    const std::string name = option.name;
    auto note = [raw = &f, name](const std::string&) { raw->ignored.push_back(name); };
    if (option.value) {
      build->add_option_function<std::string>(name, note, "ignored")->group(ignored_group);
    } else {
      build->add_flag_callback(name, [raw = &f, name] { raw->ignored.push_back(name); }, "ignored")
          ->group(ignored_group);
    }
  }
}

void AddRefusedFlags(CLI::App* build) {
  const std::string refused_group = "trtexec options trtwatch refuses (exit 2, with the reason)";
  for (const RefusedOption& option : kRefusedOptions) {
    const std::string message = std::string(option.name) + ": " + option.why;
    auto refuse = [message](const std::string&) { throw CLI::ValidationError(message); };
    if (option.value) {
      build->add_option_function<std::string>(option.name, refuse, option.why)->group(refused_group);
    } else {
      build->add_flag_callback(option.name, [message] { throw CLI::ValidationError(message); }, option.why)
          ->group(refused_group);
    }
  }
}

}  // namespace

void AddTensorRtFlags(CLI::App* build, BuildCommandOptions* options) {
  trt::RawBuildFlags& f = options->tensorrt;
  TensorRtGroup group{build};
  AddPrecisionFlags(group, options);
  AddBuilderFlags(group, f);
  AddShapeFlags(group, f);
  AddTimingCacheFlags(group, f);
  AddIgnoredInferenceFlags(build, f);
  AddRefusedFlags(build);
}

}  // namespace trtwatch
