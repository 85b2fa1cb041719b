// The build driver (TensorRtBackend), compiled against tests/tensorrt_double and run
// on its fake builder: option mapping, outcomes, atomic engine, timing cache.
#include "backends/tensorrt/tensorrt_backend.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "backends/tensorrt/factory.h"
#include "core/build_session.h"
#include "fake_tensorrt.h"
#include "support/recording_sink.h"
#include "support/stream_checks.h"
#include "support/temp_dir_test.h"

namespace trtwatch::trt {
namespace {

using trtwatch::testing::RecordingSink;

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
            const std::string& nvml = TRTWATCH_FAKE_NVML) {
    TensorRtBackend backend(options_, nvml);
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
  EXPECT_EQ(record.network_flags, 0u);
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
  EXPECT_EQ(Fact(run, "tensorrt_version"), "10.99.0");
  EXPECT_EQ(Fact(run, "tensorrt_headers"), "10.99.0");
  EXPECT_EQ(Fact(run, "gpu"), "Fake GPU H");
  EXPECT_EQ(Fact(run, "gpu_compute_capability"), "9.0");
  EXPECT_EQ(Fact(run, "gpu_memory"), "150.0 GiB");
  EXPECT_EQ(Fact(run, "gpu_count"), "2");
  EXPECT_EQ(Fact(run, "driver_version"), "999.12");
  EXPECT_EQ(Fact(run, "cuda_driver_version"), "12.8");
  EXPECT_EQ(Fact(run, "engine"), options_.output);
}

TEST_F(TensorRtBackendTest, WithoutNvmlTheFactsSaySo) {
  const Run run = Build(nullptr, 0, "libtrtwatch-no-such-nvml.so.1");
  EXPECT_EQ(run.result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(Fact(run, "gpu"), "<absent>");
  EXPECT_NE(Fact(run, "gpu_note").find("could not be loaded"), std::string::npos) << Fact(run, "gpu_note");
}

TEST_F(TensorRtBackendTest, MapsOptionsOntoTheBuilder) {
  options_.fp16 = options_.bf16 = options_.int8 = true;
  options_.workspace_bytes = 3ULL << 30;
  options_.optimization_level = 4;
  options_.max_aux_streams = 2;
  options_.max_threads = 6;
  options_.no_builder_cache = true;
  const Run run = Build();
  ASSERT_EQ(run.result.status, BuildStatus::kSucceeded) << run.result.error;
  const fake_trt::Record& r = fake_trt::GetRecord();
  using F = nvinfer1::BuilderFlag;
  EXPECT_EQ(r.flags, (std::vector<F>{F::kFP16, F::kBF16, F::kINT8, F::kDISABLE_TIMING_CACHE}));
  EXPECT_EQ(r.workspace, 3ULL << 30);
  EXPECT_EQ(r.optimization_level, 4);
  EXPECT_EQ(r.aux_streams, 2);
  EXPECT_EQ(r.max_threads, 6);
  EXPECT_EQ(r.network_flags, 0u);
}

TEST_F(TensorRtBackendTest, StronglyTypedSetsTheNetworkFlag) {
  options_.strongly_typed = true;
  ASSERT_EQ(Build().result.status, BuildStatus::kSucceeded);
  EXPECT_EQ(fake_trt::GetRecord().network_flags,
            1u << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED));
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
  options_.shapes = {{"input", {1, 3, 64, 64}, {8, 3, 224, 224}, {16, 3, 512, 512}}};
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

TEST_F(TensorRtBackendTest, DynamicInputWithoutShapesFailsNamingIt) {
  fake_trt::GetScript().inputs = {{"tokens", {-1, 128}}};
  const Run run = Build();
  EXPECT_EQ(run.result.status, BuildStatus::kFailed);
  EXPECT_NE(run.result.error.find("\"tokens\" has a dynamic shape (-1x128)"), std::string::npos) << run.result.error;
  EXPECT_NE(run.result.error.find("--optShapes=tokens:"), std::string::npos) << run.result.error;
  EXPECT_EQ(fake_trt::GetRecord().builds, 0);
  EXPECT_FALSE(Exists(options_.output));
}

TEST_F(TensorRtBackendTest, ShapesForAnUnknownInputListTheRealOnes) {
  options_.shapes = {{"image", {1, 3}, {1, 3}, {1, 3}}};
  const Run run = Build();
  EXPECT_EQ(run.result.status, BuildStatus::kFailed);
  EXPECT_NE(run.result.error.find("no input named \"image\"; its inputs are: input (1x3x224x224)"), std::string::npos)
      << run.result.error;
  options_.shapes = {{"input", {1, 3}, {1, 3}, {1, 3}}};
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
  EXPECT_EQ(Entries(), (std::vector<std::string>{"model.engine", "model.onnx", "timing.cache"}));
}

TEST_F(TensorRtBackendTest, MismatchedTimingCacheNeedsConsent) {
  options_.timing_cache = dir_ + "/timing.cache";
  const std::string other = fake_trt::MakeCacheBlob("other-gpu", 10);
  std::ofstream(options_.timing_cache) << other;
  const Run refused = Build();
  EXPECT_EQ(refused.result.status, BuildStatus::kFailed);
  EXPECT_NE(refused.result.error.find("--timing-cache-ignore-mismatch"), std::string::npos) << refused.result.error;
  EXPECT_EQ(Read(options_.timing_cache), other);
  EXPECT_FALSE(Exists(options_.output));

  fake_trt::Reset();
  options_.timing_cache_ignore_mismatch = true;
  const Run accepted = Build();
  ASSERT_EQ(accepted.result.status, BuildStatus::kSucceeded) << accepted.result.error;
  EXPECT_TRUE(fake_trt::GetRecord().cache_ignore_mismatch);
  EXPECT_EQ(Read(options_.timing_cache), fake_trt::MakeCacheBlob("other-gpu", 14));
}

TEST_F(TensorRtBackendTest, UnreadableTimingCacheIsReplacedOnlyWhenAsked) {
  options_.timing_cache = dir_ + "/timing.cache";
  std::ofstream(options_.timing_cache) << "garbage";
  const Run refused = Build();
  EXPECT_EQ(refused.result.status, BuildStatus::kFailed);
  EXPECT_NE(refused.result.error.find("cannot be read by TensorRT 10.99.0"), std::string::npos) << refused.result.error;
  EXPECT_EQ(Read(options_.timing_cache), "garbage");

  fake_trt::Reset();
  options_.timing_cache_ignore_mismatch = true;
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
  EXPECT_EQ(CompiledWith().header_version, "10.99.0");
  std::string error;
  EXPECT_NE(MakeTensorRtBackend(options_, &error), nullptr) << error;
  fake_trt::GetScript().lib_version = 9200;
  EXPECT_EQ(MakeTensorRtBackend(options_, &error), nullptr);
  EXPECT_NE(error.find("built against TensorRT 10.99.0 but loaded libnvinfer 9.2.0"), std::string::npos) << error;
}

}  // namespace
}  // namespace trtwatch::trt
