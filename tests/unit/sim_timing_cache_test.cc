// The simulated builder's timing cache (docs/simulator.md, "Timing caches"): its file
// format, and builds that reuse, share, refuse or replace a cache as TensorRT's do
// under trtexec's --timingCacheFile rules (backends/timing_cache_file.h).
#include "backends/simulated/timing_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "backends/simulated/simulator.h"
#include "backends/timing_cache_use.h"
#include "platform/sha256.h"
#include "runner/timing_cache_folder.h"
#include "core/build_session.h"
#include "core/clock.h"
#include "support/recording_sink.h"
#include "support/temp_dir_test.h"

namespace trtwatch::sim {
namespace {

// Three nodes of two tactics each: six measurements.
constexpr char kThreeNodes[] = R"({"name": "three", "root": {"name": "Building engine", "steps": 1, "children": [
  {"name": "Timing graph nodes", "steps": 3, "children": [
    {"name": "Finding fastest tactic for node {step}", "steps": 2, "step_ms": 1, "children": [
      {"name": "Measuring tactic time", "steps": 2, "step_ms": 5}]}]}]}})";

struct CacheRun {
  BuildResult result;
  int measured = 0;  // "Measuring tactic time" phases the build reported
  std::vector<std::string> logs;
  bool Logged(const std::string& text) const {
    return std::any_of(logs.begin(), logs.end(), [&](const std::string& m) { return m.find(text) != std::string::npos; });
  }
};

class SimTimingCacheTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    flags_.file = dir_ + "/timing.cache";
  }
  CacheRun Build(const std::string& profile_text, const std::string& gpu = kDefaultSimulatedGpu) {
    std::string error;
    const std::optional<Profile> profile = ParseProfile(profile_text, &error);
    EXPECT_TRUE(profile) << error;
    SimulationOptions options{1, 100.0};
    options.timing_cache = flags_;
    options.gpu = gpu;
    SimulatedBackend backend(profile.value_or(Profile{}), options);
    trtwatch::testing::RecordingSink sink;
    BuildSession session(SteadyClock::Instance(), {&sink}, SessionOptions{});
    CacheRun run;
    run.result = session.Run(backend.Describe(), [&](Monitor& m) { return backend.Build(m); });
    for (const Event& e : sink.events()) {
      if (e.type == EventType::kPhaseStart && e.phase == kMeasuringPhase) ++run.measured;
      if (e.type == EventType::kLog) run.logs.push_back(e.message);
    }
    return run;
  }
  TimingCacheData Stored() {
    Result<TimingCacheData> cache = ParseTimingCache(Read(flags_.file));
    EXPECT_TRUE(cache.ok()) << cache.error();
    return cache.ok() ? std::move(cache).value() : TimingCacheData{};
  }
  std::string Read(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  TimingCacheFlags flags_{"", false, false};
};

TEST(TimingCacheFormat, RoundTripsAndRefusesWhatIsNotACacheSayingWhy) {
  TimingCacheData cache{{kSimulatedBuilder, "NVIDIA H100"}, {{{"node a", 0}, 250}, {{"node a", 1}, 90}}};
  const Result<TimingCacheData> again = ParseTimingCache(SerializeTimingCache(cache));
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again->maker, cache.maker);
  EXPECT_EQ(again->entries, cache.entries);

  const std::pair<const char*, const char*> refused[] = {
      {"garbage", "not JSON"},
      {R"({"format": "other", "version": 1})", "\"format\""},
      {R"({"format": "trtwatch-simulated-timing-cache", "version": "1"})", "\"version\""},
      {R"({"format": "trtwatch-simulated-timing-cache", "version": 1, "builder": "b", "gpu": 7, "entries": []})",
       "\"gpu\""},
      {R"({"format": "trtwatch-simulated-timing-cache", "version": 1, "builder": "b", "gpu": "g",
           "entries": [["n", -1, 5]]})", "entry 0"},
  };
  for (const auto& [text, why] : refused) {
    const Result<TimingCacheData> parsed = ParseTimingCache(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.error().find(why), std::string::npos) << parsed.error();
    EXPECT_NE(parsed.error().find("delete the file"), std::string::npos) << "the fix is named";
  }
}

TEST(TimingCacheFormat, AMergeAddsWhatIsMissingAndKeepsWhatWasMeasured) {
  TimingCacheData into{{kSimulatedBuilder, "g"}, {{{"a", 0}, 10}}};
  const TimingCacheData from{{kSimulatedBuilder, "g"}, {{{"a", 0}, 99}, {{"b", 0}, 20}}};
  EXPECT_EQ(MergeTimingCache(into, from), 1u);
  EXPECT_EQ(into.entries.at({"a", 0}), 10);
  EXPECT_EQ(into.entries.at({"b", 0}), 20);
}

TEST(TimingCacheFormat, AnAutomaticCacheIsNamedForItsBuilderAndGpuAsAPlainFileName) {
  EXPECT_EQ(AutoTimingCacheName("TensorRT 10.16.0", "NVIDIA H100 80GB HBM3 sm 9.0"),
            "tensorrt-10.16.0_nvidia-h100-80gb-hbm3-sm-9.0.cache");
  EXPECT_EQ(AutoTimingCacheName(kSimulatedBuilder, kDefaultSimulatedGpu), "trtwatch-simulator-1_simulated-gpu.cache");
  EXPECT_EQ(AutoTimingCacheName("", "../../etc/passwd"), "unknown_etc-passwd.cache");
  EXPECT_EQ(AutoTimingCacheName("-rf", std::string(500, 'x')).size(), std::string("rf_.cache").size() + 100);
}

TEST_F(SimTimingCacheTest, ASecondBuildReusesEveryMeasurementOfTheFirst) {
  const CacheRun cold = Build(kThreeNodes);
  ASSERT_EQ(cold.result.status, BuildStatus::kSucceeded) << cold.result.error;
  EXPECT_EQ(cold.measured, 6);
  EXPECT_TRUE(cold.Logged("does not exist yet"));
  EXPECT_TRUE(cold.Logged("0 tactic measurements reused, 6 measured"));
  EXPECT_EQ(Stored().entries.size(), 6u);
  EXPECT_EQ(Stored().maker, (CacheMaker{kSimulatedBuilder, kDefaultSimulatedGpu}));

  const CacheRun warm = Build(kThreeNodes);
  ASSERT_EQ(warm.result.status, BuildStatus::kSucceeded) << warm.result.error;
  EXPECT_EQ(warm.measured, 0) << "TensorRT times no tactic its cache holds";
  EXPECT_TRUE(warm.Logged("6 tactic measurements reused, 0 measured"));
  EXPECT_EQ(Stored().entries.size(), 6u);
}

TEST_F(SimTimingCacheTest, ProfilesThatShareNodesShareEntries) {
  std::string five_nodes = kThreeNodes;
  five_nodes.replace(five_nodes.find("\"steps\": 3"), 10, "\"steps\": 5");
  ASSERT_EQ(Build(kThreeNodes).measured, 6);
  const CacheRun larger = Build(five_nodes);
  EXPECT_EQ(larger.measured, 4) << "nodes 0-2 come from the smaller model's build";
  EXPECT_EQ(Stored().entries.size(), 10u);
}

TEST_F(SimTimingCacheTest, AnotherGpusCacheIsUsedWithAWarningOrRefusedWhenStrict) {
  ASSERT_EQ(Build(kThreeNodes, "NVIDIA A100").measured, 6);
  const std::string theirs = Read(flags_.file);
  flags_.strict = true;
  const CacheRun strict = Build(kThreeNodes);
  EXPECT_EQ(strict.result.status, BuildStatus::kFailed);
  EXPECT_NE(strict.result.error.find("was made on another GPU"), std::string::npos) << strict.result.error;
  EXPECT_EQ(Read(flags_.file), theirs) << "a refused cache is left as it was";

  flags_.strict = false;
  const CacheRun lenient = Build(kThreeNodes);
  EXPECT_EQ(lenient.result.status, BuildStatus::kSucceeded);
  EXPECT_TRUE(lenient.Logged("using it anyway"));
  EXPECT_EQ(lenient.measured, 0);
  EXPECT_EQ(Stored().maker.gpu, kDefaultSimulatedGpu) << "the file is this GPU's from now on";
}

TEST_F(SimTimingCacheTest, ADamagedCacheIsReplacedByAFreshOneOrRefusedWhenStrict) {
  std::ofstream(flags_.file) << R"({"format": "trtwatch-simulated-timing-cache", "vers)";
  flags_.strict = true;
  const CacheRun strict = Build(kThreeNodes);
  EXPECT_EQ(strict.result.status, BuildStatus::kFailed);
  EXPECT_NE(strict.result.error.find("cannot be read by the simulator"), std::string::npos) << strict.result.error;

  flags_.strict = false;
  const CacheRun lenient = Build(kThreeNodes);
  EXPECT_EQ(lenient.result.status, BuildStatus::kSucceeded);
  EXPECT_TRUE(lenient.Logged("is unreadable by the simulator"));
  EXPECT_EQ(lenient.measured, 6);
  EXPECT_EQ(Stored().entries.size(), 6u);
}

TEST_F(SimTimingCacheTest, WithoutACacheFileEveryTacticIsMeasured) {
  flags_.file.clear();
  EXPECT_EQ(Build(kThreeNodes).measured, 6);
  EXPECT_EQ(Build(kThreeNodes).measured, 6);
  EXPECT_TRUE(Entries().empty());
}

TEST(TimingCacheFormat, AFolderCacheNameIsAPlainLowerCaseFileName) {
  EXPECT_TRUE(IsTimingCacheName(AutoTimingCacheName("TensorRT 10.16.0", "NVIDIA H100 80GB HBM3 sm 9.0")));
  for (const char* refused : {"", ".cache", "-x.cache", "..cache", "a/b.cache", "A.cache", "x.cache.use", "x.lock",
                              "x y.cache", "x.cache\n"}) {
    EXPECT_FALSE(IsTimingCacheName(refused)) << refused;
  }
  EXPECT_FALSE(IsTimingCacheName(std::string(250, 'a') + ".cache")) << "at most 255 characters";
}

// Issue 37: a folder's cache (--timing-cache auto, the service's fleet caches) says
// whose it is, how many builds it served and how many taught it something.
TEST_F(SimTimingCacheTest, AFolderCacheCountsTheBuildsItServedAndThoseThatTaughtIt) {
  flags_.auto_folder = dir_ + "/fleet";
  const std::string file = flags_.auto_folder + "/" + AutoTimingCacheName(kSimulatedBuilder, kDefaultSimulatedGpu);
  std::string five_nodes = kThreeNodes;
  five_nodes.replace(five_nodes.find("\"steps\": 3"), 10, "\"steps\": 5");
  ASSERT_EQ(Build(kThreeNodes).measured, 6);
  const std::optional<CacheVersion> first = FileVersion(file);
  ASSERT_TRUE(first);
  ASSERT_EQ(Build(kThreeNodes).measured, 0);
  EXPECT_EQ(FileVersion(file), first) << "a build that learnt nothing leaves the file as it was";
  ASSERT_EQ(Build(five_nodes).measured, 4);

  const std::vector<TimingCacheFile> listed = ListTimingCaches(flags_.auto_folder);
  ASSERT_EQ(listed.size(), 1u) << "the counts and the lock are not caches";
  EXPECT_EQ(listed[0].builder, kSimulatedBuilder);
  EXPECT_EQ(listed[0].gpu, kDefaultSimulatedGpu);
  EXPECT_EQ(listed[0].entries, 10);
  EXPECT_EQ(listed[0].served, 3);
  EXPECT_EQ(listed[0].contributed, 2);
  const TimingCacheUse use = ReadTimingCacheUse(file);
  ASSERT_TRUE(use.version);
  EXPECT_EQ(use.version->sha256, HexOf(Sha256Of(Read(file)))) << "the digest of what the last merge wrote";
  EXPECT_EQ(use.version->size, listed[0].size);
}

TEST_F(SimTimingCacheTest, AMergePastTheBoundKeepsTheCacheAsItWas) {
  flags_.file = dir_ + "/timing.cache";
  std::string five_nodes = kThreeNodes;
  five_nodes.replace(five_nodes.find("\"steps\": 3"), 10, "\"steps\": 5");
  ASSERT_EQ(Build(kThreeNodes).measured, 6);
  const std::string before = Read(flags_.file);
  flags_.max_bytes = before.size() + 10;
  const CacheRun bounded = Build(five_nodes);
  EXPECT_EQ(bounded.result.status, BuildStatus::kSucceeded) << "the build stands";
  EXPECT_TRUE(bounded.Logged("kept as it was")) << "the warning names the bound";
  EXPECT_TRUE(bounded.Logged("--timing-cache-max-size"));
  EXPECT_EQ(Read(flags_.file), before);
}

}  // namespace
}  // namespace trtwatch::sim
