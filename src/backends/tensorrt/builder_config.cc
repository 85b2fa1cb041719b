#include "backends/tensorrt/builder_config.h"

#include <NvInferVersion.h>

#include <cstddef>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

// Weakly typed precision flags (kFP16, kBF16, kINT8) and kEXPLICIT_BATCH are
// deprecated in TensorRT 10; they are still how a 9.x/10.x user asks for them.
#define TRTWATCH_ALLOW_DEPRECATED_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define TRTWATCH_ALLOW_DEPRECATED_END _Pragma("GCC diagnostic pop")

namespace trtwatch::trt {

namespace {

using DimValue = std::remove_reference_t<decltype(std::declval<nvinfer1::Dims&>().d[0])>;

bool ToDims(const Shape& shape, nvinfer1::Dims* dims) {
  if (shape.size() > static_cast<size_t>(nvinfer1::Dims::MAX_DIMS)) return false;
  *dims = nvinfer1::Dims{};
  dims->nbDims = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] > static_cast<int64_t>(std::numeric_limits<DimValue>::max())) return false;
    dims->d[i] = static_cast<DimValue>(shape[i]);
  }
  return true;
}

}  // namespace

nvinfer1::NetworkDefinitionCreationFlags NetworkFlags(const BuildOptions& options) {
  nvinfer1::NetworkDefinitionCreationFlags flags = 0;
#if NV_TENSORRT_MAJOR < 10
  // 9.x: ONNX models need an explicit-batch network (10.x has nothing else).
  flags |= 1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kEXPLICIT_BATCH);
#endif
#if NV_TENSORRT_MAJOR < 11
  if (options.strongly_typed) {
    flags |= 1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED);
  }
#else
  // 11.x: every network is strongly typed; the flag is deprecated and implied.
  static_cast<void>(options);
#endif
  return flags;
}

// One input's range in a profile: dimensions, or for a shape tensor its values.
bool SetProfileRange(nvinfer1::IOptimizationProfile& profile, const ShapeRange& range, bool shape_tensor) {
  const std::pair<nvinfer1::OptProfileSelector, const Shape*> sides[] = {
      {nvinfer1::OptProfileSelector::kMIN, &range.min},
      {nvinfer1::OptProfileSelector::kOPT, &range.opt},
      {nvinfer1::OptProfileSelector::kMAX, &range.max}};
  for (const auto& [selector, shape] : sides) {
    if (shape_tensor) {
#if NV_TENSORRT_MAJOR >= 11
      const std::vector<int64_t> values(shape->begin(), shape->end());
      if (!profile.setShapeValuesV2(range.input.c_str(), selector, values.data(), static_cast<int32_t>(values.size()))) {
        return false;
      }
#else
      std::vector<int32_t> values;
      for (int64_t v : *shape) {
        if (v > std::numeric_limits<int32_t>::max()) return false;
        values.push_back(static_cast<int32_t>(v));
      }
      TRTWATCH_ALLOW_DEPRECATED_BEGIN
      if (!profile.setShapeValues(range.input.c_str(), selector, values.data(), static_cast<int32_t>(values.size()))) {
        return false;
      }
      TRTWATCH_ALLOW_DEPRECATED_END
#endif
    } else {
      nvinfer1::Dims dims;
      if (!ToDims(*shape, &dims) || !profile.setDimensions(range.input.c_str(), selector, dims)) return false;
    }
  }
  return true;
}

namespace {

using F = nvinfer1::BuilderFlag;

// The precision flags (--fp16, --bf16, --int8, --fp8, --int4, --best).
void SetPrecisionFlags(const BuildOptions& o, int compute_capability, nvinfer1::IBuilderConfig& config) {
#if NV_TENSORRT_MAJOR < 11
  // --best as trtexec 10.x resolves it: fp16 and int8 (not on SM 10.3), bf16 from
  // Ampere (SM 8.0) on; an unknown GPU gets all three.
  const bool best_int8 = o.best && compute_capability != 103;
  const bool best_bf16 = o.best && (compute_capability == 0 || compute_capability >= 80);
  TRTWATCH_ALLOW_DEPRECATED_BEGIN
  if (o.fp16 || o.best) config.setFlag(F::kFP16);
  if (o.bf16 || best_bf16) config.setFlag(F::kBF16);
  if (o.int8 || best_int8) config.setFlag(F::kINT8);
  if (o.fp8) config.setFlag(F::kFP8);
#if NV_TENSORRT_MAJOR > 10 || (NV_TENSORRT_MAJOR == 10 && NV_TENSORRT_MINOR >= 1)
  if (o.int4) config.setFlag(F::kINT4);
#endif
  TRTWATCH_ALLOW_DEPRECATED_END
#else
  // 11.x: every network is strongly typed; the weakly typed flags are gone.
  static_cast<void>(o);
  static_cast<void>(compute_capability);
  static_cast<void>(config);
#endif
}

// The builder's on/off flags besides precision.
void SetBuilderFlags(const BuildOptions& o, nvinfer1::IBuilderConfig& config) {
  if (o.no_tf32) config.clearFlag(F::kTF32);
  if (o.refit) config.setFlag(F::kREFIT);
#if NV_TENSORRT_MAJOR >= 10
  if (o.strip_weights) {  // trtexec: a weight-stripped plan, refittable with the same weights
    config.setFlag(F::kSTRIP_PLAN);
    config.setFlag(F::kREFIT_IDENTICAL);
  }
  if (o.allow_weight_streaming) config.setFlag(F::kWEIGHT_STREAMING);
#endif
  if (o.version_compatible) config.setFlag(F::kVERSION_COMPATIBLE);
  if (o.exclude_lean_runtime) config.setFlag(F::kEXCLUDE_LEAN_RUNTIME);
  if (o.no_compilation_cache) config.setFlag(F::kDISABLE_COMPILATION_CACHE);
  TRTWATCH_ALLOW_DEPRECATED_BEGIN  // kDIRECT_IO: deprecated in 10.x, still honoured
  if (o.direct_io) config.setFlag(F::kDIRECT_IO);
  TRTWATCH_ALLOW_DEPRECATED_END
  if (o.sparsity) config.setFlag(F::kSPARSE_WEIGHTS);
  if (o.error_on_timing_cache_miss) config.setFlag(F::kERROR_ON_TIMING_CACHE_MISS);
  if (o.no_builder_cache) config.setFlag(F::kDISABLE_TIMING_CACHE);
}

// Memory pool limits, optimization and tiling levels; false with the reason when
// TensorRT refuses one.
bool SetLimitsAndLevels(const BuildOptions& o, nvinfer1::IBuilderConfig& config, std::string* error) {
  static_cast<void>(error);  // refusals are possible from TensorRT 10.8 on
  using P = nvinfer1::MemoryPoolType;
  const std::pair<P, const std::optional<uint64_t>*> pools[] = {
      {P::kWORKSPACE, &o.workspace_bytes},
      {P::kDLA_MANAGED_SRAM, &o.dla_sram_bytes},
      {P::kDLA_LOCAL_DRAM, &o.dla_local_dram_bytes},
      {P::kDLA_GLOBAL_DRAM, &o.dla_global_dram_bytes},
#if NV_TENSORRT_MAJOR >= 10
      {P::kTACTIC_SHARED_MEMORY, &o.tactic_shared_memory_bytes},
#endif
  };
  for (const auto& [pool, bytes] : pools) {
    if (*bytes) config.setMemoryPoolLimit(pool, static_cast<std::size_t>(**bytes));
  }
  if (o.optimization_level) config.setBuilderOptimizationLevel(*o.optimization_level);
  if (o.max_aux_streams) config.setMaxAuxStreams(*o.max_aux_streams);
#if NV_TENSORRT_MAJOR > 10 || (NV_TENSORRT_MAJOR == 10 && NV_TENSORRT_MINOR >= 4)
  if (o.max_tactics) config.setMaxNbTactics(*o.max_tactics);
#endif
#if NV_TENSORRT_MAJOR > 10 || (NV_TENSORRT_MAJOR == 10 && NV_TENSORRT_MINOR >= 8)
  if (o.tiling_optimization_level &&
      !config.setTilingOptimizationLevel(static_cast<nvinfer1::TilingOptimizationLevel>(*o.tiling_optimization_level))) {
    *error = "TensorRT refused --tilingOptimizationLevel=" + std::to_string(*o.tiling_optimization_level);
    return false;
  }
#endif
  return true;
}

// --tacticSources; false with the reason when TensorRT refuses them.
bool SetTacticSources(const BuildOptions& o, nvinfer1::IBuilderConfig& config, std::string* error) {
  if (o.tactic_sources.empty()) return true;
  nvinfer1::TacticSources sources = config.getTacticSources();
  for (const TacticSourceChange& change : o.tactic_sources) {
    nvinfer1::TacticSource source = nvinfer1::TacticSource::kEDGE_MASK_CONVOLUTIONS;
    if (change.source == "JIT_CONVOLUTIONS") source = nvinfer1::TacticSource::kJIT_CONVOLUTIONS;
#if NV_TENSORRT_MAJOR < 11
    TRTWATCH_ALLOW_DEPRECATED_BEGIN
    if (change.source == "CUBLAS") source = nvinfer1::TacticSource::kCUBLAS;
    if (change.source == "CUBLAS_LT") source = nvinfer1::TacticSource::kCUBLAS_LT;
    if (change.source == "CUDNN") source = nvinfer1::TacticSource::kCUDNN;
    TRTWATCH_ALLOW_DEPRECATED_END
#endif
    const auto bit = 1U << static_cast<uint32_t>(source);
    sources = change.enable ? (sources | bit) : (sources & ~bit);
  }
  if (!config.setTacticSources(sources)) {
    *error = "TensorRT refused the --tacticSources given";
    return false;
  }
  return true;
}

// Hardware compatibility, profiling verbosity, DLA and the plugins to serialize.
void SetPlacementAndExtras(const BuildOptions& o, nvinfer1::IBuilderConfig& config) {
  if (!o.hardware_compatibility_level.empty()) {
    using H = nvinfer1::HardwareCompatibilityLevel;
    H level = H::kNONE;
    if (o.hardware_compatibility_level == "ampere+") level = H::kAMPERE_PLUS;
#if NV_TENSORRT_MAJOR > 10 || (NV_TENSORRT_MAJOR == 10 && NV_TENSORRT_MINOR >= 9)
    if (o.hardware_compatibility_level == "sameComputeCapability") level = H::kSAME_COMPUTE_CAPABILITY;
#endif
    config.setHardwareCompatibilityLevel(level);
  }
  if (!o.profiling_verbosity.empty()) {
    using V = nvinfer1::ProfilingVerbosity;
    config.setProfilingVerbosity(o.profiling_verbosity == "detailed" ? V::kDETAILED
                                 : o.profiling_verbosity == "none"   ? V::kNONE
                                                                     : V::kLAYER_NAMES_ONLY);
  }
  if (o.dla_core) {
    config.setDefaultDeviceType(nvinfer1::DeviceType::kDLA);
    config.setDLACore(*o.dla_core);
    if (o.allow_gpu_fallback) config.setFlag(F::kGPU_FALLBACK);
  }
  if (!o.plugins_to_serialize.empty()) {
    std::vector<const char*> paths;
    for (const std::string& path : o.plugins_to_serialize) paths.push_back(path.c_str());
    config.setPluginsToSerialize(paths.data(), static_cast<int32_t>(paths.size()));
  }
}

}  // namespace

bool ConfigureBuilder(const BuildOptions& o, int compute_capability, nvinfer1::IBuilderConfig& config,
                      std::string* error) {
  if (!CheckForTensorRtVersion(o, NV_TENSORRT_MAJOR, NV_TENSORRT_MINOR, error)) return false;
  SetPrecisionFlags(o, compute_capability, config);
  SetBuilderFlags(o, config);
  if (!SetLimitsAndLevels(o, config, error) || !SetTacticSources(o, config, error)) return false;
  SetPlacementAndExtras(o, config);
  return true;
}

}  // namespace trtwatch::trt
