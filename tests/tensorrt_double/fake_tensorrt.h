// Control of the fake TensorRT (part of the TEST DOUBLE, not NVIDIA code), built as
// stand-ins for TensorRT's libraries: fake_tensorrt.cc is libnvinfer.so.N,
// fake_onnx_parser.cc libnvonnxparser.so.N, fake_plugins.cc libnvinfer_plugin.so.N: what the next build does (Script) and what the backend asked of the
// builder (Record).
//
// The fake builder behaves towards its progress monitor as TensorRT documents:
// several threads report at once, a phase's first step is running when it starts,
// a false from stepComplete stops every thread, the active phases finish early and
// buildSerializedNetwork returns null.
//
// Threading: set the Script before a build and read the Record after it; the
// counters and thread set written during the build are atomic or mutex-guarded.
#pragma once

#include <NvInfer.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace fake_trt {

struct FakeInput {
  std::string name;
  std::vector<int64_t> dims;  // -1: dynamic
  bool shape_tensor = false;
};

// What getTacticSources() reports before any change (all five sources).
inline constexpr nvinfer1::TacticSources kDefaultTacticSources = 0x1F;

struct Script {
  int32_t lib_version = NV_TENSORRT_VERSION;  // what getInferLibVersion() returns (10.99.0)
  bool builder_fails = false;    // createInferBuilder returns null
  bool parse_fails = false;      // parseFromFile reports an unsupported node
  std::vector<FakeInput> inputs = {{"input", {1, 3, 224, 224}}};
  int workers = 4;   // threads calling the monitor at once, per root step
  int root_steps = 3;
  int worker_steps = 25;
  int step_ms = 0;  // a pause after each worker step
  std::string cache_key = "t";  // timing-cache entries a build learns are named cache_key + N
  bool build_fails = false;  // logs an error, returns no engine
  std::string engine = "FAKE-ENGINE:0123456789";
  // Called once on worker 0's thread after its step `hook_step` of the first root step.
  int hook_step = -1;
  std::function<void()> hook;
  // Called after the last callback, just before an engine is returned.
  std::function<void()> before_return;
};

struct Record {
  uint32_t network_flags = 0;
  std::vector<nvinfer1::BuilderFlag> flags;
  std::optional<size_t> workspace;
  std::optional<int32_t> optimization_level;
  std::optional<int32_t> aux_streams;
  std::optional<int32_t> max_threads;
  struct DimsCall {
    std::string input;
    nvinfer1::OptProfileSelector selector;
    std::vector<int64_t> dims;
    bool values = false;  // setShapeValues (a shape tensor), not setDimensions
  };
  std::vector<DimsCall> dims_calls;
  int profiles_added = 0;
  std::string parsed_file;
  int parse_verbosity = -1;
  std::string cache_blob_in;  // what createTimingCache was given
  bool cache_set = false;
  bool cache_ignore_mismatch = false;
  bool monitor_attached_during_build = false;
  bool monitor_detached_after_build = false;
  int builds = 0;
  std::atomic<int> builders_created{0};  // createInferBuilder calls (a cache hit makes none)
  bool returned_engine = false;
  std::vector<nvinfer1::BuilderFlag> cleared_flags;
  std::map<int32_t, size_t> pools;  // MemoryPoolType -> bytes
  std::optional<nvinfer1::TacticSources> tactic_sources;
  std::optional<nvinfer1::HardwareCompatibilityLevel> hardware_compatibility;
  std::optional<nvinfer1::ProfilingVerbosity> profiling_verbosity;
  std::optional<int32_t> dla_core;
  std::optional<nvinfer1::DeviceType> device_type;
  std::vector<std::string> plugins_to_serialize;
  std::vector<std::string> dynamic_plugins;
  std::optional<int32_t> max_tactics;
  std::optional<int32_t> tiling_level;
  int cache_combines = 0;
  int32_t builder_version_arg = 0;  // the version createInferBuilder_INTERNAL was given
  int parser_version_arg = -1;
  int plugin_inits = 0;  // initLibNvInferPlugins calls
  bool plugin_logger_given = false;
  std::string plugin_namespace;
  std::atomic<int> steps_reported{0};
  std::atomic<int> false_returns{0};
  std::mutex threads_mu;
  std::set<std::thread::id> callback_threads;  // guarded by threads_mu
};

Script& GetScript();
Record& GetRecord();
// A fresh Script and Record; call at the start of every test.
void Reset();

// The parser's side of the fake network: adds the Script's inputs.
void PopulateNetwork(nvinfer1::INetworkDefinition& network);

// The fake's timing cache format: "FAKECACHE;device=NAME;entries=N;keys=K1|K2|". A
// cache from another device mismatches; anything else is unreadable.
std::string CacheBlob(const std::string& device, const std::set<std::string>& keys);
bool ParseCacheBlob(const std::string& blob, std::string* device, std::set<std::string>* keys);
// A cache with entries t0..t(N-1), what N steps of learning from empty give.
std::string MakeCacheBlob(const std::string& device, int entries);

}  // namespace fake_trt
