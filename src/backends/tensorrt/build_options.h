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
struct RawBuildFlags {
  bool fp16 = false;
  bool bf16 = false;
  bool int8 = false;
  bool strongly_typed = false;
  std::vector<std::string> mem_pool_size;  // --memPoolSize=workspace:N[B|K|M|G] (MiB if no unit)
  std::string workspace;                   // --workspace=N (MiB), trtexec's older spelling
  std::string builder_optimization_level;  // 0..5
  std::string max_aux_streams;             // >= 0
  std::string max_threads;                 // >= 1
  std::string min_shapes;                  // input:1x3x224x224,other:1x128
  std::string opt_shapes;
  std::string max_shapes;
  bool verbose = false;
  std::string timing_cache;  // --timing-cache FILE (also --timingCacheFile)
  bool timing_cache_ignore_mismatch = false;
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

struct BuildOptions {
  std::string model;   // MODEL.onnx
  std::string output;  // ENGINE
  bool fp16 = false;
  bool bf16 = false;
  bool int8 = false;
  bool strongly_typed = false;
  std::optional<uint64_t> workspace_bytes;
  std::optional<int32_t> optimization_level;
  std::optional<int32_t> max_aux_streams;
  std::optional<int32_t> max_threads;
  std::vector<ShapeRange> shapes;  // in first-mentioned order
  bool verbose = false;
  std::string timing_cache;
  bool timing_cache_ignore_mismatch = false;
  bool no_builder_cache = false;
  bool error_on_timing_cache_miss = false;
};

// Syntax and consistency: numbers, units, shape lists, flag combinations. Touches no
// file. Returns false with the message in `*error`.
bool ResolveBuildOptions(const std::string& model, const std::string& output, const RawBuildFlags& raw,
                         BuildOptions* options, std::string* error);

// The file system side: the model is a readable file, the engine's and the timing
// cache's folders exist and are not the files themselves.
bool CheckBuildPaths(const BuildOptions& options, std::string* error);

// What the TensorRT major version in use (9, 10, 11...) cannot do.
bool CheckForTensorRtMajor(const BuildOptions& options, int major, std::string* error);

// Parsers, exposed for tests. `flag` names the option in messages.
bool ParseShapeList(const std::string& text, const char* flag, std::vector<std::pair<std::string, Shape>>* out,
                    std::string* error);
bool ParseMemorySize(const std::string& text, const char* flag, uint64_t* bytes, std::string* error);

// "10.3.0" from getInferLibVersion(): 10.x on encode major*10000+minor*100+patch,
// 9.x and older major*1000+minor*100+patch.
std::string FormatTensorRtVersion(int32_t version);
// "1x3x224x224".
std::string FormatShape(const Shape& shape);

}  // namespace trtwatch::trt
