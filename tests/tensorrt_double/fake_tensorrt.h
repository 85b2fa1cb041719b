// Control of the fake TensorRT in fake_tensorrt.cc (part of the TEST DOUBLE, not
// NVIDIA code): what the next build does (Script) and what the backend asked of the
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
#include <chrono>
#include <cstdint>
#include <functional>
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
};

// FAKE_TENSORRT_STEP_MS, when set to a number: how long each worker step takes, so
// that a program linked against the double as its TensorRT (examples/cpp in CI) builds
// for a while and can be timed out or interrupted.
std::chrono::milliseconds StepTimeFromEnvironment();

struct Script {
  int32_t lib_version = 109900;  // what getInferLibVersion() returns (10.99.0)
  bool builder_fails = false;    // createInferBuilder returns null
  bool parse_fails = false;      // parseFromFile reports an unsupported node
  std::vector<FakeInput> inputs = {{"input", {1, 3, 224, 224}}};
  int workers = 4;   // threads calling the monitor at once, per root step
  int root_steps = 3;
  int worker_steps = 25;
  std::chrono::milliseconds step_time = StepTimeFromEnvironment();
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
  bool returned_engine = false;
  std::atomic<int> steps_reported{0};
  std::atomic<int> false_returns{0};
  std::mutex threads_mu;
  std::set<std::thread::id> callback_threads;  // guarded by threads_mu
};

Script& GetScript();
Record& GetRecord();
// A fresh Script and Record; call at the start of every test.
void Reset();

// The fake's timing cache format: "FAKECACHE;device=NAME;entries=N". A cache from
// another device mismatches; anything else is unreadable.
std::string MakeCacheBlob(const std::string& device, int entries);

}  // namespace fake_trt
