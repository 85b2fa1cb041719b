// The build driver (TensorRtBackend), compiled against tests/tensorrt_double and run
// on its fake builder: option mapping, outcomes, atomic engine, timing cache.
#include "backends/tensorrt/tensorrt_backend.h"

#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/tensorrt/factory.h"
#include "core/build_session.h"
#include "fake_tensorrt.h"
#include "support/recording_sink.h"
#include "support/stream_checks.h"
#include "support/fake_tensorrt_library.h"
#include "support/temp_dir_test.h"

namespace trtwatch::trt {
namespace {

using trtwatch::testing::RecordingSink;
using trtwatch::testing::FakeTensorRt;

// The headers' version as FormatTensorRtVersion prints it (kDoubleVersion for the 10.x double).
const std::string kDoubleVersion = FormatTensorRtVersion(NV_TENSORRT_VERSION);

class TensorRtBackendTest : public trtwatch::testing::TempDirTest {
 protected:
  void SetUp() override {
    fake_trt::Reset();
    TempDirTest::SetUp();
    std::ofstream(dir_ + "/model.onnx") << "onnx bytes";
    options_.model = dir_ + "/model.onnx";
    options_.output = dir_ + "/model.engine";
  }
  void TearDown() override {
    TempDirTest::TearDown();
    fake_trt::Reset();
  }
  bool Exists(const std::string& path) const { return ::access(path.c_str(), F_OK) == 0; }

  struct Run {
    BuildResult result;
    std::vector<Event> events;
  };
  // Builds with options_; `during` runs from the fake builder's worker 0 at `hook_step`.
  Run Build(const std::function<void(Monitor&)>& during = nullptr, int hook_step = 3,
            const GpuLibraries& gpu = {TRTWATCH_FAKE_NVML, TRTWATCH_FAKE_CUDA}) {
    TensorRtBackend backend(options_, tensorrt_ != nullptr ? *tensorrt_ : FakeTensorRt(), gpu);
    RecordingSink sink;
    BuildSession session(SteadyClock::Instance(), {&sink}, SessionOptions{});
    if (during) {
      fake_trt::GetScript().hook_step = hook_step;
      fake_trt::GetScript().hook = [&] { during(session.monitor()); };
    }
    Run run;
    run.result = session.Run(backend.Describe(), [&](Monitor& m) { return backend.Build(m); });
    run.events = sink.events();
    fake_trt::GetScript().hook = nullptr;
    return run;
  }
  static std::string Fact(const Run& run, const std::string& key) {
    for (const auto& [k, v] : run.events.front().facts) {
      if (k == key) return v;
    }
    return "<absent>";
  }
  static std::vector<std::string> LogMessages(const Run& run) {
    std::vector<std::string> messages;
    for (const Event& e : run.events) {
      if (e.type == EventType::kLog) messages.push_back(e.message);
    }
    return messages;
  }

  BuildOptions options_;
  const LoadedTensorRt* tensorrt_ = nullptr;  // FakeTensorRt() when null
};

TEST_F(TensorRtBackendTest, BuildsAndWritesTheEngine) {
  const Run run = Build();
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  EXPECT_EQ(Read(options_.output), fake_trt::GetScript().engine);
  EXPECT_EQ(Entries(), (std::vector<std::string>{"model.engine", "model.onnx"}));  // no temporary left
  testing::ExpectWellFormedStream(run.events);

  const fake_trt::Record& record = fake_trt::GetRecord();
  EXPECT_TRUE(record.monitor_attached_during_build);
  EXPECT_TRUE(record.monitor_detached_after_build);
  EXPECT_EQ(record.parsed_file, options_.model);
  EXPECT_EQ(record.parse_verbosity, static_cast<int>(nvinfer1::ILogger::Severity::kWARNING));
  EXPECT_EQ(record.network_flags, NV_TENSORRT_MAJOR < 10 ? 1u : 0u);  // 9.x: kEXPLICIT_BATCH
  EXPECT_GE(record.callback_threads.size(), 2u);  // the monitor was called from several threads
  EXPECT_EQ(record.false_returns.load(), 0);

  // The phase tree arrived: the root and each worker's phase, every step reported.
  int phase_starts = 0;
  for (const Event& e : run.events) phase_starts += e.type == EventType::kPhaseStart;
  const fake_trt::Script& script = fake_trt::GetScript();
  EXPECT_EQ(phase_starts, 1 + script.root_steps * script.workers);
  EXPECT_EQ(record.steps_reported.load(), script.root_steps * script.workers * script.worker_steps);
}

TEST_F(TensorRtBackendTest, BuildStartCarriesTensorRtAndGpuFacts) {
  const Run run = Build();
  ASSERT_FALSE(run.events.empty());
  EXPECT_EQ(run.events.front().type, EventType::kBuildStart);
  EXPECT_EQ(run.events.front().backend, "tensorrt");
  EXPECT_EQ(run.events.front().model, options_.model);
  EXPECT_EQ(Fact(run, "tensorrt_version"), kDoubleVersion);
  EXPECT_EQ(Fact(run, "tensorrt_headers"), kDoubleVersion);
  // CUDA's device 0 (the builder's), which NVML numbers 1: matched by PCI bus id.
  EXPECT_EQ(Fact(run, "gpu"), "Fake GPU H");
  EXPECT_EQ(Fact(run, "gpu_device"), "0");
  EXPECT_EQ(Fact(run, "gpu_compute_capability"), "9.0");
  EXPECT_EQ(Fact(run, "gpu_memory"), "150.0 GiB");
  EXPECT_EQ(Fact(run, "gpu_pci_bus_id"), "0000:5e:00.0");
  EXPECT_EQ(Fact(run, "gpu_uuid"), "GPU-00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(Fact(run, "gpu_count"), "2");
  EXPECT_EQ(Fact(run, "driver_version"), "999.12");
  EXPECT_EQ(Fact(run, "cuda_driver_version"), "12.8");
  EXPECT_EQ(Fact(run, "gpu_note"), "<absent>");
  EXPECT_EQ(Fact(run, "engine"), options_.output);
}

TEST_F(TensorRtBackendTest, WithoutTheDriverLibrariesTheFactsSaySo) {
  const Run run = Build(nullptr, 0, {"libtrtwatch-no-such-nvml.so.1", "libtrtwatch-no-such-cuda.so.1"});
  EXPECT_EQ(run.result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(Fact(run, "gpu"), "<absent>");
  EXPECT_NE(Fact(run, "gpu_note").find("libtrtwatch-no-such-cuda.so.1"), std::string::npos) << Fact(run, "gpu_note");
  EXPECT_NE(Fact(run, "gpu_note").find("libtrtwatch-no-such-nvml.so.1"), std::string::npos) << Fact(run, "gpu_note");
}

TEST_F(TensorRtBackendTest, WithoutTheCudaDriverNvmlsGpuIsNamedWithACaveat) {
  const Run run = Build(nullptr, 0, {TRTWATCH_FAKE_NVML, "libtrtwatch-no-such-cuda.so.1"});
  EXPECT_EQ(Fact(run, "gpu"), "Fake GPU A");  // NVML's first, not the builder's
  EXPECT_NE(Fact(run, "gpu_note").find("which CUDA may number differently"), std::string::npos)
      << Fact(run, "gpu_note");
}

// What the stand-in CUDA driver says is retained now (tests/fake_cuda).
int FakeCudaRetainedDevice() {
  void* handle = ::dlopen(TRTWATCH_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
  const int device = reinterpret_cast<int (*)()>(::dlsym(handle, "fake_cuda_retained_device"))();
  ::dlclose(handle);
  return device;
}

TEST_F(TensorRtBackendTest, DeviceChoosesTheGpuTheBuilderUsesAndItsFacts) {
  options_.device = 1;
  int retained_during_build = -2;
  const Run run = Build([&](Monitor&) { retained_during_build = FakeCudaRetainedDevice(); });
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  EXPECT_EQ(Fact(run, "gpu"), "Fake GPU A");
  EXPECT_EQ(Fact(run, "gpu_device"), "1");
  EXPECT_EQ(Fact(run, "gpu_compute_capability"), "8.0");
  EXPECT_EQ(retained_during_build, 1);       // CUDA's device 1 was current while TensorRT built
  EXPECT_EQ(FakeCudaRetainedDevice(), -1);  // and released with the builder
}

TEST_F(TensorRtBackendTest, ADeviceCudaDoesNotHaveIsRefusedWithTheCount) {
  options_.device = 5;
  TensorRtBackend backend(options_, FakeTensorRt(), {TRTWATCH_FAKE_NVML, TRTWATCH_FAKE_CUDA});
  EXPECT_NE(backend.DeviceProblem().find("--device=5: CUDA has no device 5: it sees 2, numbered 0-1"), std::string::npos)
      << backend.DeviceProblem();
  const Run run = Build();
  EXPECT_EQ(run.result.status, BuildStatus::kFailed);
  EXPECT_NE(run.result.error.find("CUDA has no device 5"), std::string::npos) << run.result.error;
  EXPECT_FALSE(Exists(options_.output));
}

TEST_F(TensorRtBackendTest, MapsOptionsOntoTheBuilder) {
#if NV_TENSORRT_MAJOR < 11
  options_.fp16 = options_.bf16 = options_.int8 = true;
#endif
  options_.workspace_bytes = 3ULL << 30;
  options_.dla_sram_bytes = 1ULL << 20;
  options_.optimization_level = 4;
  options_.max_aux_streams = 2;
  options_.max_threads = 6;
  options_.no_builder_cache = true;
  options_.no_tf32 = true;
  options_.refit = true;
  options_.version_compatible = options_.exclude_lean_runtime = true;
  options_.hardware_compatibility_level = "ampere+";
  options_.profiling_verbosity = "detailed";
  options_.dla_core = 1;
  options_.allow_gpu_fallback = true;
  options_.tactic_sources = {{"JIT_CONVOLUTIONS", false}};
  const Run run = Build();
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  const fake_trt::Record& r = fake_trt::GetRecord();
  using F = nvinfer1::BuilderFlag;
  std::vector<F> expected;
#if NV_TENSORRT_MAJOR < 11
  expected = {F::kFP16, F::kBF16, F::kINT8};
#endif
  for (F f : {F::kREFIT, F::kVERSION_COMPATIBLE, F::kEXCLUDE_LEAN_RUNTIME, F::kDISABLE_TIMING_CACHE, F::kGPU_FALLBACK}) {
    expected.push_back(f);
  }
  EXPECT_EQ(r.flags, expected);
  EXPECT_EQ(r.cleared_flags, std::vector<F>{F::kTF32});
  EXPECT_EQ(r.workspace, 3ULL << 30);
  EXPECT_EQ(r.pools.at(static_cast<int32_t>(nvinfer1::MemoryPoolType::kDLA_MANAGED_SRAM)), 1ULL << 20);
  EXPECT_EQ(r.optimization_level, 4);
  EXPECT_EQ(r.aux_streams, 2);
  EXPECT_EQ(r.max_threads, 6);
  EXPECT_EQ(r.hardware_compatibility, nvinfer1::HardwareCompatibilityLevel::kAMPERE_PLUS);
  EXPECT_EQ(r.profiling_verbosity, nvinfer1::ProfilingVerbosity::kDETAILED);
  EXPECT_EQ(r.dla_core, 1);
  EXPECT_EQ(r.device_type, nvinfer1::DeviceType::kDLA);
  EXPECT_EQ(r.tactic_sources,
            fake_trt::kDefaultTacticSources & ~(1U << static_cast<uint32_t>(nvinfer1::TacticSource::kJIT_CONVOLUTIONS)));
  EXPECT_EQ(r.network_flags, NV_TENSORRT_MAJOR < 10 ? 1u : 0u);  // 9.x: kEXPLICIT_BATCH
}

#if NV_TENSORRT_MAJOR == 10
TEST_F(TensorRtBackendTest, TensorRt10OptionsAndBestFollowTheGpu) {
  options_.best = true;
  options_.int4 = true;
  options_.strip_weights = true;
  options_.max_tactics = 3;
  options_.tiling_optimization_level = 2;
  options_.tactic_shared_memory_bytes = 48 * 1024;
  // The stand-in NVML reports compute capability 8.0 or more for its first GPU.
  const Run run = Build();
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  const fake_trt::Record& r = fake_trt::GetRecord();
  using F = nvinfer1::BuilderFlag;
  EXPECT_EQ(r.flags, (std::vector<F>{F::kFP16, F::kBF16, F::kINT8, F::kINT4, F::kSTRIP_PLAN, F::kREFIT_IDENTICAL}));
  EXPECT_EQ(r.max_tactics, 3);
  EXPECT_EQ(r.tiling_level, 2);
  EXPECT_EQ(r.pools.at(static_cast<int32_t>(nvinfer1::MemoryPoolType::kTACTIC_SHARED_MEMORY)), 48u * 1024);
  // Without the driver's libraries the GPU is unknown: --best asks for all three.
  fake_trt::Reset();
  BuildOptions best_only;
  best_only.model = options_.model;
  best_only.output = options_.output;
  best_only.best = true;
  options_ = best_only;
  ASSERT_EQ(Build(nullptr, 3, {dir_ + "/no-nvml.so", dir_ + "/no-cuda.so"}).result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(fake_trt::GetRecord().flags, (std::vector<F>{F::kFP16, F::kBF16, F::kINT8}));
}
#endif

#if NV_TENSORRT_MAJOR == 9
TEST_F(TensorRtBackendTest, TensorRt9RefusesWhatCameLater) {
  options_.int4 = true;
  std::string error;
  EXPECT_EQ(MakeTensorRtBackend(options_, FakeTensorRt(), &error), nullptr);
  EXPECT_NE(error.find("--int4 needs TensorRT 10.1 or newer"), std::string::npos) << error;
}
#endif

#if NV_TENSORRT_MAJOR >= 11
TEST_F(TensorRtBackendTest, TensorRt11RefusesWeakTypesAndRemovedTacticSources) {
  std::string error;
  options_.best = true;
  EXPECT_EQ(MakeTensorRtBackend(options_, FakeTensorRt(), &error), nullptr);
  EXPECT_NE(error.find("strongly typed networks only"), std::string::npos) << error;
  options_.best = false;
  options_.tactic_sources = {{"CUBLAS", true}};
  EXPECT_EQ(MakeTensorRtBackend(options_, FakeTensorRt(), &error), nullptr);
  EXPECT_NE(error.find("has no CUBLAS tactic source"), std::string::npos) << error;
}
#endif

TEST_F(TensorRtBackendTest, StronglyTypedSetsTheNetworkFlag) {
  options_.strongly_typed = true;
  ASSERT_EQ(Build().result.status, BuildStatus::kSucceeded);
  using NF = nvinfer1::NetworkDefinitionCreationFlag;
  // 9.x adds kEXPLICIT_BATCH; 11.x has strongly typed networks only (no flag).
  const uint32_t expected = NV_TENSORRT_MAJOR >= 11 ? 0u
                            : (1u << static_cast<uint32_t>(NF::kSTRONGLY_TYPED)) |
                                  (NV_TENSORRT_MAJOR < 10 ? 1u << static_cast<uint32_t>(NF::kEXPLICIT_BATCH) : 0u);
  EXPECT_EQ(fake_trt::GetRecord().network_flags, expected);
  EXPECT_TRUE(fake_trt::GetRecord().flags.empty());
}

TEST_F(TensorRtBackendTest, LogLinesAreSeverityFiltered) {
  const Run quiet = Build();
  EXPECT_TRUE(LogMessages(quiet).empty());
  fake_trt::Reset();
  options_.verbose = true;
  const Run verbose = Build();
  const std::vector<std::string> logs = LogMessages(verbose);
  EXPECT_NE(std::find(logs.begin(), logs.end(), "fake: building an engine"), logs.end());
  EXPECT_NE(std::find(logs.begin(), logs.end(), "fake: verbose detail"), logs.end());
  EXPECT_EQ(fake_trt::GetRecord().parse_verbosity, static_cast<int>(nvinfer1::ILogger::Severity::kVERBOSE));
}

TEST_F(TensorRtBackendTest, DynamicShapesBecomeOneProfile) {
  fake_trt::GetScript().inputs = {{"input", {-1, 3, -1, -1}}, {"scale", {1}}};
  options_.profiles = {{{"input", {1, 3, 64, 64}, {8, 3, 224, 224}, {16, 3, 512, 512}}}};
  const Run run = Build();
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  const fake_trt::Record& r = fake_trt::GetRecord();
  ASSERT_EQ(r.dims_calls.size(), 3u);
  EXPECT_EQ(r.dims_calls[0].input, "input");
  EXPECT_EQ(r.dims_calls[0].selector, nvinfer1::OptProfileSelector::kMIN);
  EXPECT_EQ(r.dims_calls[0].dims, (std::vector<int64_t>{1, 3, 64, 64}));
  EXPECT_EQ(r.dims_calls[1].selector, nvinfer1::OptProfileSelector::kOPT);
  EXPECT_EQ(r.dims_calls[2].dims, (std::vector<int64_t>{16, 3, 512, 512}));
  EXPECT_EQ(r.profiles_added, 1);
}

TEST_F(TensorRtBackendTest, DynamicInputWithoutShapesGetsOnesWithAWarning) {
  fake_trt::GetScript().inputs = {{"tokens", {-1, 128}}};
  const Run run = Build();
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  const fake_trt::Record& r = fake_trt::GetRecord();
  ASSERT_EQ(r.dims_calls.size(), 3u);
  for (const auto& call : r.dims_calls) EXPECT_EQ(call.dims, (std::vector<int64_t>{1, 128}));
  EXPECT_EQ(r.profiles_added, 1);
  bool warned = false;
  for (const std::string& line : LogMessages(run)) {
    warned = warned || (line.find("\"tokens\" is dynamic (-1x128) but no shapes were given: using 1x128") !=
                            std::string::npos &&
                        line.find("--minShapes/--optShapes/--maxShapes=tokens:") != std::string::npos);
  }
  EXPECT_TRUE(warned);
}

TEST_F(TensorRtBackendTest, ShapeTensorsGetValuesAndScalarsWork) {
  fake_trt::GetScript().inputs = {{"dims", {2}, /*shape_tensor=*/true}, {"x", {}}};
  options_.profiles = {{{"dims", {1, 8}, {4, 8}, {8, 8}}}};
  const Run run = Build();
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  const fake_trt::Record& r = fake_trt::GetRecord();
  ASSERT_EQ(r.dims_calls.size(), 3u);
  EXPECT_TRUE(r.dims_calls[0].values);
  EXPECT_EQ(r.dims_calls[1].dims, (std::vector<int64_t>{4, 8}));
  options_.profiles = {{{"dims", {1}, {1}, {1}}}};
  fake_trt::Reset();
  fake_trt::GetScript().inputs = {{"dims", {2}, true}};
  const Run wrong = Build();
  EXPECT_NE(wrong.result.error.find("the values given for it have 1 values"), std::string::npos) << wrong.result.error;
}

TEST_F(TensorRtBackendTest, SeveralProfilesEachGetEveryDynamicInput) {
  fake_trt::GetScript().inputs = {{"a", {-1, 4}}, {"b", {-1}}};
  options_.profiles = {{{"a", {1, 4}, {2, 4}, {4, 4}}, {"b", {1}, {1}, {1}}}, {{"a", {8, 4}, {8, 4}, {16, 4}}}};
  const Run run = Build();
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  const fake_trt::Record& r = fake_trt::GetRecord();
  EXPECT_EQ(r.profiles_added, 2);
  ASSERT_EQ(r.dims_calls.size(), 12u);  // 2 inputs x 2 profiles x min/opt/max
  EXPECT_EQ(r.dims_calls[3].dims, (std::vector<int64_t>{8, 4}));  // a, profile 1, min
  EXPECT_EQ(r.dims_calls[9].dims, (std::vector<int64_t>{1}));     // b, profile 1: defaulted to 1
}

TEST_F(TensorRtBackendTest, ShapesForAnUnknownInputListTheRealOnes) {
  options_.profiles = {{{"image", {1, 3}, {1, 3}, {1, 3}}}};
  const Run run = Build();
  EXPECT_EQ(run.result.status, BuildStatus::kFailed);
  EXPECT_NE(run.result.error.find("no input named \"image\"; its inputs are: input (1x3x224x224)"), std::string::npos)
      << run.result.error;
  options_.profiles = {{{"input", {1, 3}, {1, 3}, {1, 3}}}};
  const Run rank = Build();
  EXPECT_NE(rank.result.error.find("have 2 dimensions"), std::string::npos) << rank.result.error;
}

TEST_F(TensorRtBackendTest, CancelReturnsNoEngineAndLeavesTheOldFile) {
  std::ofstream(options_.output) << "OLD ENGINE";
  const Run run = Build([](Monitor& m) { m.RequestCancel(CancelReason::kSignal, "interrupted (SIGINT)"); });
  EXPECT_EQ(run.result.status, BuildStatus::kCancelled) << run.result.error;
  EXPECT_EQ(run.result.cancel_reason, CancelReason::kSignal);
  ASSERT_TRUE(run.result.cancel_latency.has_value());
  EXPECT_TRUE(run.result.cancel_latency->to_first_false.has_value());
  EXPECT_GE(fake_trt::GetRecord().false_returns.load(), 1);
  EXPECT_FALSE(fake_trt::GetRecord().returned_engine);
  EXPECT_EQ(Read(options_.output), "OLD ENGINE");
  EXPECT_EQ(Entries(), (std::vector<std::string>{"model.engine", "model.onnx"}));
  testing::ExpectWellFormedStream(run.events);
}

TEST_F(TensorRtBackendTest, TimeoutIsTimedOut) {
  const Run run = Build([](Monitor& m) { m.RequestCancel(CancelReason::kTimeout, "--timeout 1s"); });
  EXPECT_EQ(run.result.status, BuildStatus::kTimedOut);
  EXPECT_FALSE(Exists(options_.output));
}

TEST_F(TensorRtBackendTest, CancelAfterTheLastStepStillWritesNothing) {
  // The request lands after TensorRT's last callback: the engine exists in memory,
  // but the user asked to stop, so no file appears and the build is cancelled.
  Monitor* monitor = nullptr;
  fake_trt::GetScript().before_return = [&] { monitor->RequestCancel(CancelReason::kUser, "stop"); };
  const Run run = Build([&](Monitor& m) { monitor = &m; }, 0);
  EXPECT_TRUE(fake_trt::GetRecord().returned_engine);
  EXPECT_EQ(fake_trt::GetRecord().false_returns.load(), 0);
  EXPECT_EQ(run.result.status, BuildStatus::kCancelled);
  EXPECT_FALSE(Exists(options_.output));
  EXPECT_EQ(Entries(), std::vector<std::string>{"model.onnx"});
}

TEST_F(TensorRtBackendTest, FailureCarriesTensorRtsErrors) {
  std::ofstream(options_.output) << "OLD ENGINE";
  fake_trt::GetScript().build_fails = true;
  const Run run = Build();
  EXPECT_EQ(run.result.status, BuildStatus::kFailed);
  EXPECT_NE(run.result.error.find("TensorRT built no engine"), std::string::npos) << run.result.error;
  EXPECT_NE(run.result.error.find("out of device memory"), std::string::npos) << run.result.error;
  EXPECT_EQ(Read(options_.output), "OLD ENGINE");
}

TEST_F(TensorRtBackendTest, ParseFailureNamesTheModelAndTheNode) {
  fake_trt::GetScript().parse_fails = true;
  const Run run = Build();
  EXPECT_EQ(run.result.status, BuildStatus::kFailed);
  EXPECT_NE(run.result.error.find("cannot parse the ONNX model \"" + options_.model + "\""), std::string::npos);
  EXPECT_NE(run.result.error.find("UNSUPPORTED_NODE"), std::string::npos) << run.result.error;
  EXPECT_EQ(fake_trt::GetRecord().builds, 0);
}

TEST_F(TensorRtBackendTest, NoBuilderPointsAtTheGpu) {
  fake_trt::GetScript().builder_fails = true;
  const Run run = Build();
  EXPECT_EQ(run.result.status, BuildStatus::kFailed);
  EXPECT_NE(run.result.error.find("NVIDIA GPU"), std::string::npos) << run.result.error;
  EXPECT_NE(run.result.error.find("CUDA initialization failure"), std::string::npos) << run.result.error;
}

TEST_F(TensorRtBackendTest, EngineThatCannotBeSavedFailsWithoutAPartialFile) {
  options_.output = dir_ + "/gone/model.engine";  // the folder vanished after validation
  const Run run = Build();
  EXPECT_EQ(run.result.status, BuildStatus::kFailed);
  EXPECT_NE(run.result.error.find("the engine was built but not saved"), std::string::npos) << run.result.error;
  EXPECT_EQ(Entries(), std::vector<std::string>{"model.onnx"});
}

TEST_F(TensorRtBackendTest, TimingCacheIsCreatedThenReused) {
  options_.timing_cache = dir_ + "/timing.cache";
  const Run first = Build();
  ASSERT_EQ(first.result.status, BuildStatus::kSucceeded) << first.result.error;
  EXPECT_EQ(fake_trt::GetRecord().cache_blob_in, "");
  EXPECT_TRUE(fake_trt::GetRecord().cache_set);
  EXPECT_EQ(Read(options_.timing_cache), fake_trt::MakeCacheBlob("fake-gpu", 4));
  const std::vector<std::string> logs = LogMessages(first);
  EXPECT_TRUE(std::any_of(logs.begin(), logs.end(),
                          [](const std::string& m) { return m.find("does not exist yet") != std::string::npos; }));

  fake_trt::Reset();
  const Run second = Build();
  ASSERT_EQ(second.result.status, BuildStatus::kSucceeded) << second.result.error;
  EXPECT_EQ(fake_trt::GetRecord().cache_blob_in, fake_trt::MakeCacheBlob("fake-gpu", 4));
  EXPECT_EQ(Read(options_.timing_cache), fake_trt::MakeCacheBlob("fake-gpu", 8));
  EXPECT_EQ(Entries(), (std::vector<std::string>{"model.engine", "model.onnx", "timing.cache", "timing.cache.lock"}));
}

// --timing-cache auto: the user's cache for this TensorRT and GPU (docs/tensorrt.md).
TEST_F(TensorRtBackendTest, TimingCacheAutoIsTheFileOfThisTensorRtAndGpu) {
  options_.timing_cache = kAutoTimingCache;
  options_.timing_cache_folder = dir_ + "/caches";
  const Run run = Build();
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  const std::string file = Fact(run, "timing_cache");
  EXPECT_EQ(file.rfind(dir_ + "/caches/tensorrt-", 0), 0u) << file;
  EXPECT_NE(file.find("-sm-"), std::string::npos) << "the GPU's compute capability names it: " << file;
  EXPECT_EQ(Read(file), fake_trt::MakeCacheBlob("fake-gpu", 4));
  std::filesystem::remove_all(dir_ + "/caches");
}

TEST_F(TensorRtBackendTest, MismatchedTimingCacheIsUsedWithAWarningUnlessStrict) {
  options_.timing_cache = dir_ + "/timing.cache";
  const std::string other = fake_trt::MakeCacheBlob("other-gpu", 10);
  std::ofstream(options_.timing_cache) << other;
  options_.timing_cache_strict = true;
  const Run refused = Build();
  EXPECT_EQ(refused.result.status, BuildStatus::kFailed);
  EXPECT_NE(refused.result.error.find("drop --timing-cache-strict"), std::string::npos) << refused.result.error;
  EXPECT_EQ(Read(options_.timing_cache), other);
  EXPECT_FALSE(Exists(options_.output));

  fake_trt::Reset();
  options_.timing_cache_strict = false;
  const Run accepted = Build();
  ASSERT_EQ(accepted.result.status, BuildStatus::kSucceeded) << accepted.result.error;
  EXPECT_TRUE(fake_trt::GetRecord().cache_ignore_mismatch);
  bool warned = false;
  for (const std::string& line : LogMessages(accepted)) warned = warned || line.find("using it anyway") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_EQ(Read(options_.timing_cache), fake_trt::MakeCacheBlob("other-gpu", 14));
}

TEST_F(TensorRtBackendTest, NoBuilderCacheWinsOverTheCacheFile) {
  options_.timing_cache = dir_ + "/timing.cache";
  options_.no_builder_cache = true;
  const Run run = Build();
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  EXPECT_FALSE(fake_trt::GetRecord().cache_set);
  EXPECT_FALSE(Exists(options_.timing_cache));
}

TEST_F(TensorRtBackendTest, SavingMergesWhatAnotherBuildWroteMeanwhile) {
  options_.timing_cache = dir_ + "/timing.cache";
  // Another build saves its entries while this one runs.
  fake_trt::GetScript().cache_key = "mine";
  fake_trt::GetScript().before_return = [&] {
    std::ofstream(options_.timing_cache) << fake_trt::CacheBlob("fake-gpu", {"theirs0", "theirs1"});
  };
  const Run run = Build();
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  EXPECT_EQ(Read(options_.timing_cache),
            fake_trt::CacheBlob("fake-gpu", {"mine0", "mine1", "mine2", "mine3", "theirs0", "theirs1"}));
  EXPECT_TRUE(Exists(options_.timing_cache + ".lock"));
}

TEST_F(TensorRtBackendTest, UnreadableTimingCacheIsReplacedUnlessStrict) {
  options_.timing_cache = dir_ + "/timing.cache";
  std::ofstream(options_.timing_cache) << "garbage";
  options_.timing_cache_strict = true;
  const Run refused = Build();
  EXPECT_EQ(refused.result.status, BuildStatus::kFailed);
  EXPECT_NE(refused.result.error.find("cannot be read by TensorRT " + kDoubleVersion), std::string::npos) << refused.result.error;
  EXPECT_EQ(Read(options_.timing_cache), "garbage");

  fake_trt::Reset();
  options_.timing_cache_strict = false;
  const Run replaced = Build();
  ASSERT_EQ(replaced.result.status, BuildStatus::kSucceeded) << replaced.result.error;
  EXPECT_EQ(Read(options_.timing_cache), fake_trt::MakeCacheBlob("fake-gpu", 4));
}

TEST_F(TensorRtBackendTest, CancelledBuildKeepsWhatTheCacheLearnt) {
  options_.timing_cache = dir_ + "/timing.cache";
  const Run run = Build([](Monitor& m) { m.RequestCancel(CancelReason::kUser, "stop"); });
  EXPECT_EQ(run.result.status, BuildStatus::kCancelled);
  EXPECT_FALSE(Exists(options_.output));
  EXPECT_EQ(Read(options_.timing_cache), fake_trt::MakeCacheBlob("fake-gpu", 4));
}

TEST_F(TensorRtBackendTest, ErrorOnTimingCacheMissFailsOnAnEmptyCache) {
  options_.timing_cache = dir_ + "/timing.cache";
  options_.error_on_timing_cache_miss = true;
  const Run run = Build();
  EXPECT_EQ(run.result.status, BuildStatus::kFailed);
  EXPECT_NE(run.result.error.find("timing cache miss"), std::string::npos) << run.result.error;
  using F = nvinfer1::BuilderFlag;
  EXPECT_EQ(fake_trt::GetRecord().flags, std::vector<F>{F::kERROR_ON_TIMING_CACHE_MISS});
}

TEST_F(TensorRtBackendTest, FactoryChecksTheLibraryMatchesTheHeaders) {
  EXPECT_TRUE(CompiledWith().built);
  EXPECT_TRUE(CompiledWith().test_double);
  EXPECT_EQ(CompiledWith().header_version, kDoubleVersion);
  std::string error;
  EXPECT_NE(MakeTensorRtBackend(options_, FakeTensorRt(), &error), nullptr) << error;
  fake_trt::GetScript().lib_version = NV_TENSORRT_MAJOR == 9 ? 100300 : 9200;
  EXPECT_EQ(MakeTensorRtBackend(options_, FakeTensorRt(), &error), nullptr);
  const std::string loaded = NV_TENSORRT_MAJOR == 9 ? "10.3.0" : "9.2.0";
  EXPECT_NE(error.find("built against TensorRT " + kDoubleVersion + " but loaded libnvinfer " + loaded),
            std::string::npos)
      << error;
}

TEST_F(TensorRtBackendTest, StandardPluginsAreInitialisedAndUserPluginsLoaded) {
  const std::string plugin = dir_ + "/libmyplugin.so";
  std::ofstream(plugin) << "not really a library";
  options_.dynamic_plugins = {plugin};
  options_.plugins_to_serialize = {plugin};
  // A fresh load: the standard plugins are initialised once per LoadedTensorRt.
  std::string error;
  const auto fresh = LoadedTensorRt::Load(
      LibraryNamesIn(TRTWATCH_FAKE_TENSORRT_DIR, LibraryNamesForMajor(NV_TENSORRT_MAJOR)), &error);
  ASSERT_NE(fresh, nullptr) << error;
  tensorrt_ = fresh.get();
  const Run run = Build();
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  EXPECT_EQ(fake_trt::GetRecord().plugin_inits, 1);
  ASSERT_EQ(Build().result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(fake_trt::GetRecord().plugin_inits, 1);  // not again
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  const fake_trt::Record& r = fake_trt::GetRecord();
  EXPECT_TRUE(r.plugin_logger_given);
  EXPECT_EQ(r.plugin_namespace, "");
  EXPECT_EQ(r.dynamic_plugins, (std::vector<std::string>{plugin, plugin}));  // once per build
  EXPECT_EQ(r.plugins_to_serialize, (std::vector<std::string>{plugin, plugin}));
  options_.static_plugins = {plugin};  // not a shared library: named in the failure
  const Run bad = Build();
  EXPECT_EQ(bad.result.status, BuildStatus::kFailed);
  EXPECT_NE(bad.result.error.find("--staticPlugins: cannot load \"" + plugin + "\""), std::string::npos)
      << bad.result.error;
}

TEST_F(TensorRtBackendTest, EntryPointsGetTheHeadersVersions) {
  ASSERT_EQ(Build().result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(fake_trt::GetRecord().builder_version_arg, NV_TENSORRT_VERSION);
  EXPECT_EQ(fake_trt::GetRecord().parser_version_arg, NV_ONNX_PARSER_VERSION);
}

TEST_F(TensorRtBackendTest, MissingLibrariesAreNamedWithTheFix) {
  std::string error;
  const TensorRtLibraryNames names = LibraryNamesForMajor(NV_TENSORRT_MAJOR);
  EXPECT_EQ(LoadedTensorRt::Load(LibraryNamesIn(dir_, names), &error), nullptr);
  EXPECT_NE(error.find("TensorRT " + std::to_string(NV_TENSORRT_MAJOR) + " is not installed"), std::string::npos)
      << error;
  EXPECT_NE(error.find(names.nvinfer), std::string::npos) << error;
  EXPECT_NE(error.find("LD_LIBRARY_PATH"), std::string::npos) << error;
  // nvinfer present, the parser absent: the parser is named.
  TensorRtLibraryNames half = LibraryNamesIn(TRTWATCH_FAKE_TENSORRT_DIR, names);
  half.onnx_parser = dir_ + "/" + names.onnx_parser;
  EXPECT_EQ(LoadedTensorRt::Load(half, &error), nullptr);
  EXPECT_NE(error.find("ONNX parser is not installed"), std::string::npos) << error;
  // Not TensorRT at all: the missing entry point is named.
  TensorRtLibraryNames wrong = LibraryNamesIn(TRTWATCH_FAKE_TENSORRT_DIR, names);
  wrong.nvinfer = TRTWATCH_FAKE_NVML;
  EXPECT_EQ(LoadedTensorRt::Load(wrong, &error), nullptr);
  EXPECT_NE(error.find("getInferLibVersion is missing"), std::string::npos) << error;
}

// A full disk while the engine and the timing cache are written, reproduced with a file
// size limit (EFBIG instead of ENOSPC: the same path through the code) in a child
// process, so that the limit stays there. `check` runs in the child; its result is the
// child's exit code.
class TensorRtDiskFullTest : public TensorRtBackendTest {
 protected:
  void InChildWithFileSizeLimit(rlim_t bytes, const std::function<bool()>& check) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      std::signal(SIGXFSZ, SIG_IGN);
      struct rlimit limit {bytes, bytes};
      ::setrlimit(RLIMIT_FSIZE, &limit);
      std::_Exit(check() ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's checks failed (its stderr says which)";
  }
  static bool Expect(bool ok, const std::string& what) {
    if (!ok) std::fprintf(stderr, "disk-full check failed: %s\n", what.c_str());
    return ok;
  }
};

TEST_F(TensorRtDiskFullTest, EngineThatDoesNotFitFailsTheBuildAndLeavesNoFile) {
  options_.timing_cache = dir_ + "/timing.cache";
  InChildWithFileSizeLimit(8, [&] {
    const Run run = Build();
    const std::vector<std::string> logs = LogMessages(run);
    const bool cache_warned = std::any_of(logs.begin(), logs.end(), [](const std::string& m) {
      return m.find("timing cache not saved: cannot write") != std::string::npos;
    });
    return Expect(run.result.status == BuildStatus::kFailed, "status failed") &&
           Expect(run.result.error.find("the engine was built but not saved") != std::string::npos, run.result.error) &&
           Expect(run.events.back().type == EventType::kBuildFinish && run.events.back().status == BuildStatus::kFailed,
                  "build_finish says failed") &&
           Expect(cache_warned, "the cache's failure is logged") &&
           Expect(Entries() == std::vector<std::string>{"model.onnx", "timing.cache.lock"}, "no partial files");
  });
}

TEST_F(TensorRtDiskFullTest, TimingCacheThatDoesNotFitIsAWarningAndTheOldCacheStays) {
  options_.timing_cache = dir_ + "/timing.cache";
  ASSERT_EQ(Build().result.status, BuildStatus::kSucceeded);  // a cache of 4 entries
  const std::string old_cache = Read(options_.timing_cache);
  fake_trt::Reset();
  fake_trt::GetScript().cache_key = "a-much-longer-timing-cache-entry-";  // the merged cache grows
  // Room for the engine, not for the merged cache.
  ASSERT_LT(fake_trt::GetScript().engine.size(), old_cache.size());
  InChildWithFileSizeLimit(old_cache.size() + 1, [&] {
    const Run run = Build();
    const std::vector<std::string> logs = LogMessages(run);
    const bool cache_warned = std::any_of(logs.begin(), logs.end(), [](const std::string& m) {
      return m.find("timing cache not saved: cannot write") != std::string::npos;
    });
    return Expect(run.result.status == BuildStatus::kSucceeded, "status succeeded: " + run.result.error) &&
           Expect(cache_warned, "the cache's failure is logged") &&
           Expect(Read(options_.timing_cache) == old_cache, "the old cache is intact") &&
           Expect(Read(options_.output) == fake_trt::GetScript().engine, "the engine is saved") &&
           Expect(Entries() == std::vector<std::string>{"model.engine", "model.onnx", "timing.cache",
                                                        "timing.cache.lock"},
                  "no partial files");
  });
}

}  // namespace
}  // namespace trtwatch::trt
