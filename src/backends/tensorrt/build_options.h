// Options of a TensorRT engine build, trtexec-style, and their validation.
//
// This file pair includes no TensorRT header: it is compiled and tested everywhere,
// and every check here runs before a build starts, so bad input ends with exit 2 and
// a message naming the problem and its fix. The driver (tensorrt_backend.cc) maps a
// validated BuildOptions onto the builder config. Pure functions; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trtwatch::trt {

// As typed on the command line (the CLI fills these; numbers stay text so that the
// messages about them are ours).
// One --profile's shape lists (trtexec: `--profile=0 --minShapes=... --profile=1 ...`).
struct RawProfile {
  std::string min_shapes;  // input:1x3x224x224,other:1x128
  std::string opt_shapes;
  std::string max_shapes;
};

struct RawBuildFlags {
  bool fp16 = false;
  bool bf16 = false;
  bool int8 = false;
  bool fp8 = false;
  bool int4 = false;
  bool best = false;  // trtexec: fp16 + int8 + bf16 (bf16 from Ampere on)
  bool strongly_typed = false;
  bool no_tf32 = false;
  std::vector<std::string> mem_pool_size;  // --memPoolSize=POOL:N[B|K|M|G] (MiB if no unit)
  std::string workspace;                   // --workspace=N (MiB), trtexec's older spelling
  std::string builder_optimization_level;  // 0..5
  std::string max_aux_streams;             // >= 0
  std::string max_threads;                 // >= 1 (trtwatch's own: trtexec has no such option)
  std::string max_tactics;                 // --maxTactics, >= -1 (-1: TensorRT's default)
  std::string tiling_optimization_level;   // 0..3 (none, fast, moderate, full)
  std::string tactic_sources;              // -CUBLAS,+CUDNN,...
  std::string hardware_compatibility_level;  // none | ampere+ | sameComputeCapability
  std::string profiling_verbosity;           // layer_names_only | detailed | none
  bool version_compatible = false;           // --versionCompatible / --vc
  bool exclude_lean_runtime = false;
  bool refit = false;
  bool strip_weights = false;  // also trtexec's older --weightless
  bool allow_weight_streaming = false;
  bool no_compilation_cache = false;
  bool direct_io = false;
  std::string sparsity;      // disable | enable
  std::string use_dla_core;  // N
  bool allow_gpu_fallback = false;
  std::string device;        // --device=N: the CUDA device to build on
  std::vector<std::string> static_plugins;
  std::vector<std::string> dynamic_plugins;
  std::vector<std::string> plugins_to_serialize;
  std::string min_shapes;  // the profile when no --profile is given
  std::string opt_shapes;
  std::string max_shapes;
  std::vector<RawProfile> profiles;  // --profile=N blocks, in N order
  int current_profile = -1;          // the latest --profile=N (the CLI's parse state)
  std::vector<std::string> ignored;  // trtexec's inference-only options seen (noticed, not used)
  bool verbose = false;
  std::string timing_cache;  // --timing-cache FILE (also --timingCacheFile)
  bool timing_cache_ignore_mismatch = false;  // ignore a mismatch without the warning
  bool timing_cache_strict = false;           // refuse a mismatched or unreadable cache
  std::string timing_cache_dir;       // --timing-cache-dir: where `auto` keeps its caches
  std::string timing_cache_max_size;  // --timing-cache-max-size: the cache file's bound
  bool no_builder_cache = false;           // --noBuilderCache: BuilderFlag::kDISABLE_TIMING_CACHE
  bool error_on_timing_cache_miss = false;  // BuilderFlag::kERROR_ON_TIMING_CACHE_MISS
};

using Shape = std::vector<int64_t>;

// One input's dynamic-shape range (one optimization profile holds them all).
struct ShapeRange {
  std::string input;
  Shape min;
  Shape opt;
  Shape max;
};

// An empty range list is fine; shapes for a shape tensor are its values.
using Profile = std::vector<ShapeRange>;

// --tacticSources: what to add to and remove from TensorRT's default set.
struct TacticSourceChange {
  std::string source;  // CUBLAS, CUBLAS_LT, CUDNN, EDGE_MASK_CONVOLUTIONS, JIT_CONVOLUTIONS
  bool enable = true;
};

struct BuildOptions {
  std::string model;   // MODEL.onnx
  std::string output;  // ENGINE; empty: built, not saved (trtexec without --saveEngine)
  bool fp16 = false;
  bool bf16 = false;
  bool int8 = false;
  bool fp8 = false;
  bool int4 = false;
  bool best = false;  // resolved against the GPU by the driver (as trtexec does)
  bool strongly_typed = false;
  bool no_tf32 = false;
  std::optional<uint64_t> workspace_bytes;
  std::optional<uint64_t> dla_sram_bytes;
  std::optional<uint64_t> dla_local_dram_bytes;
  std::optional<uint64_t> dla_global_dram_bytes;
  std::optional<uint64_t> tactic_shared_memory_bytes;
  std::optional<int32_t> optimization_level;
  std::optional<int32_t> max_aux_streams;
  std::optional<int32_t> max_threads;
  std::optional<int32_t> max_tactics;
  std::optional<int32_t> tiling_optimization_level;
  std::vector<TacticSourceChange> tactic_sources;
  std::string hardware_compatibility_level;  // "" (default), none, ampere+, sameComputeCapability
  std::string profiling_verbosity;           // "" (default), layer_names_only, detailed, none
  bool version_compatible = false;
  bool exclude_lean_runtime = false;
  bool refit = false;
  bool strip_weights = false;
  bool allow_weight_streaming = false;
  bool no_compilation_cache = false;
  bool direct_io = false;
  bool sparsity = false;
  std::optional<int32_t> dla_core;
  bool allow_gpu_fallback = false;
  std::optional<int32_t> device;
  std::vector<std::string> static_plugins;
  std::vector<std::string> dynamic_plugins;
  std::vector<std::string> plugins_to_serialize;
  std::vector<Profile> profiles;  // optimization profiles, each input in first-mentioned order
  std::vector<std::string> notices;  // one line each, logged when the build starts
  bool verbose = false;
  std::string timing_cache;  // a file, or kAutoTimingCache (backends/timing_cache_file.h)
  std::string timing_cache_folder;  // kAutoTimingCache: the folder of the user's automatic caches
  uint64_t timing_cache_max_bytes = 0;  // the cache file is not grown past it (0: no bound)
  bool timing_cache_ignore_mismatch = false;
  bool timing_cache_strict = false;
  bool no_builder_cache = false;  // wins over timing_cache: the file is not used
  bool error_on_timing_cache_miss = false;
};

// Syntax and consistency: numbers, units, shape lists, flag combinations. Touches no
// file. Returns false with the message in `*error`.
bool ResolveBuildOptions(const std::string& model, const std::string& output, const RawBuildFlags& raw,
                         BuildOptions* options, std::string* error);

// The file system side: the model is a readable file, the engine's and the timing
// cache's folders exist and are not the files themselves.
bool CheckBuildPaths(const BuildOptions& options, std::string* error);

// What the TensorRT version in use (major 9, 10, 11..., and minor) cannot do.
bool CheckForTensorRtMajor(const BuildOptions& options, int major, std::string* error);
bool CheckForTensorRtVersion(const BuildOptions& options, int major, int minor, std::string* error);

// Parsers, exposed for tests. `flag` names the option in messages.
bool ParseShapeList(const std::string& text, const char* flag, std::vector<std::pair<std::string, Shape>>* out,
                    std::string* error);

// "10.3.0" from getInferLibVersion(): 10.x on encode major*10000+minor*100+patch,
// 9.x and older major*1000+minor*100+patch.
std::string FormatTensorRtVersion(int32_t version);
// The major version in such a number (10 for 100300, 9 for 9200).
int TensorRtMajorOf(int32_t version);
// "1x3x224x224".
std::string FormatShape(const Shape& shape);

}  // namespace trtwatch::trt
