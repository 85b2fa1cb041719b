// The public engine cache (include/trtwatch/engine_cache.h) as a user's own build code
// drives it: keys from model files, options, TensorRT's version and the GPU (found
// through the stand-in CUDA driver), lookups, stores, GetOrBuild alone, from several
// threads at once, and under a Watch whose stream says hit or miss.
#include <trtwatch/engine_cache.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "api/cache_key.h"
#include "support/onnx_model.h"
#include "support/recording_sink.h"
#include "support/temp_dir_test.h"

namespace trtwatch {
namespace {

namespace fs = std::filesystem;

std::vector<char> Bytes(const std::string& text) { return std::vector<char>(text.begin(), text.end()); }

EngineCacheOptions In(const std::string& folder) {
  EngineCacheOptions options;
  options.folder = folder;
  return options;
}

class EngineCacheApiTest : public trtwatch::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    model_ = dir_ + "/model.onnx";
    std::ofstream(model_, std::ios::binary) << trtwatch::testing::OnnxModel({trtwatch::testing::Tensor("w", "")});
  }
  void TearDown() override { fs::remove_all(dir_); }

  CacheKeySource Source() const {
    CacheKeySource source;
    source.models = {model_};
    source.options = {"fp16", "workspace=1G"};
    source.tensorrt_version = "10.3.0";
    source.gpu_name = "NVIDIA H100";
    source.gpu_compute_capability = "9.0";
    return source;
  }
  CacheKey Key(const CacheKeySource& source) const {
    const CacheKeyResult key = ComputeCacheKey(source);
    EXPECT_TRUE(key.ok()) << key.error;
    return key.key.value_or(CacheKey{});
  }
  std::unique_ptr<EngineCache> Open() const {
    EngineCacheOpened opened = EngineCache::Open(In(dir_ + "/cache"));
    EXPECT_TRUE(opened.cache) << opened.error;
    return std::move(opened.cache);
  }

  std::string model_;
};

std::string Part(const CacheKey& key, const std::string& name) {
  for (const auto& [n, value] : key.parts) {
    if (n == name) return value;
  }
  return "(absent)";
}

TEST_F(EngineCacheApiTest, KeysFollowTheModelsBytesTheOptionsTensorRtAndTheGpu) {
  const CacheKey key = Key(Source());
  EXPECT_EQ(key.digest.size(), 64u);
  EXPECT_EQ(Key(Source()).digest, key.digest) << "the same build, the same key";
  EXPECT_EQ(Part(key, "tensorrt.runtime"), "10.3.0");
  EXPECT_EQ(Part(key, "gpu.name"), "NVIDIA H100");
  EXPECT_EQ(Part(key, "option[1]"), "workspace=1G");
  EXPECT_EQ(Part(key, "model.external_data"), "0");
  EXPECT_EQ(Part(key, "model.sha256").size(), 64u);

  CacheKeySource other = Source();
  other.options = {"workspace=1G", "fp16"};
  EXPECT_NE(Key(other).digest, key.digest) << "options count in their order";
  other = Source();
  other.tensorrt_version = "10.4.0";
  EXPECT_NE(Key(other).digest, key.digest);
  other = Source();
  other.gpu_compute_capability = "8.9";
  EXPECT_NE(Key(other).digest, key.digest);
  other = Source();
  other.extra = {{"calibration", "abc"}};
  EXPECT_EQ(Part(Key(other), "extra.calibration"), "abc");
  std::ofstream(model_, std::ios::binary) << trtwatch::testing::OnnxModel(
      {trtwatch::testing::Tensor("w", "", "\x01\x03")});
  EXPECT_NE(Key(Source()).digest, key.digest) << "a weight byte changed";
}

TEST_F(EngineCacheApiTest, AnOnnxModelsExternalDataCountsAndAMissingFileIsAnError) {
  std::ofstream(model_, std::ios::binary) << trtwatch::testing::OnnxModel({trtwatch::testing::Tensor("w", "w.bin")});
  std::ofstream(dir_ + "/w.bin", std::ios::binary) << "weights";
  const CacheKey key = Key(Source());
  EXPECT_EQ(Part(key, "model.external_data"), "1");
  std::ofstream(dir_ + "/w.bin", std::ios::binary) << "other weights";
  EXPECT_NE(Key(Source()).digest, key.digest) << "the weights changed";
  fs::remove(dir_ + "/w.bin");
  const CacheKeyResult missing = ComputeCacheKey(Source());
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.error.find("w.bin"), std::string::npos) << missing.error;
}

TEST_F(EngineCacheApiTest, SeveralModelsAreNumberedAndAnyFileMayBeOne) {
  std::ofstream(dir_ + "/calib.cache", std::ios::binary) << "not ONNX";
  CacheKeySource source = Source();
  source.models.push_back(dir_ + "/calib.cache");
  const CacheKey key = Key(source);
  EXPECT_EQ(Part(key, "models"), "2");
  EXPECT_EQ(Part(key, "model[1].sha256").size(), 64u);
  EXPECT_EQ(Part(key, "model[1].external_data"), "(absent)") << "only ONNX models name external data";
}

TEST_F(EngineCacheApiTest, AKeyWithoutTensorRtOrWithHalfAGpuSaysWhatToGive) {
  CacheKeySource source = Source();
  source.tensorrt_version.clear();
  CacheKeyResult key = ComputeCacheKey(source);
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.error.find("RuntimeVersion()"), std::string::npos) << key.error;
  source = Source();
  source.gpu_name.clear();
  key = ComputeCacheKey(source);
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.error.find("gpu_name and gpu_compute_capability"), std::string::npos) << key.error;
  source.models = {dir_ + "/absent.onnx"};
  source.gpu_name = "G";
  EXPECT_FALSE(ComputeCacheKey(source).ok());
}

TEST_F(EngineCacheApiTest, TheGpuIsFoundThroughCudaWhenNoneIsGiven) {
  CacheKeySource source = Source();
  source.gpu_name.clear();
  source.gpu_compute_capability.clear();
  const CacheKeyResult key = api::ComputeCacheKey(source, TRTWATCH_FAKE_CUDA);
  ASSERT_TRUE(key.ok()) << key.error;
  EXPECT_EQ(Part(*key.key, "gpu.name"), "Fake GPU H");
  EXPECT_EQ(Part(*key.key, "gpu.compute_capability"), "9.0");
  source.device = 1;
  EXPECT_EQ(Part(*api::ComputeCacheKey(source, TRTWATCH_FAKE_CUDA).key, "gpu.name"), "Fake GPU A");
  source.device = 7;
  const CacheKeyResult absent = api::ComputeCacheKey(source, TRTWATCH_FAKE_CUDA);
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.error.find("give gpu_name"), std::string::npos) << absent.error;
  const CacheKeyResult no_driver = api::ComputeCacheKey(source, dir_ + "/no-libcuda.so");
  ASSERT_FALSE(no_driver.ok());
  EXPECT_NE(no_driver.error.find("trtwatch doctor"), std::string::npos) << no_driver.error;
}

TEST_F(EngineCacheApiTest, TextKeysAreStableAndDistinct) {
  EXPECT_EQ(CacheKeyFromText("resnet50 fp16 v3").digest, CacheKeyFromText("resnet50 fp16 v3").digest);
  EXPECT_NE(CacheKeyFromText("resnet50 fp16 v3").digest, CacheKeyFromText("resnet50 fp16 v4").digest);
  EXPECT_EQ(CacheKeyFromText("x").digest.size(), 64u);
}

TEST_F(EngineCacheApiTest, PutThenGetReturnsThePlanWithItsFacts) {
  const std::unique_ptr<EngineCache> cache = Open();
  const CacheKey key = Key(Source());
  const CachedEngine miss = cache->Get(key);
  EXPECT_EQ(miss.status, CacheStatus::kMiss);
  EXPECT_EQ(CacheStatusName(miss.status), "miss");
  EXPECT_TRUE(miss.error.empty() && miss.plan.empty());

  const std::string plan = "PLAN-BYTES";
  const CacheStoreResult stored = cache->Put(key, plan.data(), plan.size(), 12.5, "model.onnx");
  ASSERT_TRUE(stored.stored) << stored.error;
  const CachedEngine hit = cache->Get(key);
  ASSERT_TRUE(hit.hit()) << hit.error;
  EXPECT_EQ(hit.plan, Bytes(plan));
  EXPECT_EQ(hit.size, plan.size());
  EXPECT_DOUBLE_EQ(hit.build_seconds, 12.5);
  EXPECT_GE(hit.age_seconds, 0);
  EXPECT_EQ(Read(hit.path), plan);
  EXPECT_EQ(hit.key, key.digest);

  const CachedEngine found = cache->Find(key);
  ASSERT_TRUE(found.hit());
  EXPECT_TRUE(found.plan.empty()) << "Find reads no bytes";
  const EngineCacheStats stats = cache->Stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.misses, 1u) << "the store counts the miss";
  EXPECT_DOUBLE_EQ(stats.seconds_saved, 25.0);
  // Nothing is left of the plan's temporary file.
  for (const auto& item : fs::directory_iterator(cache->folder())) {
    EXPECT_EQ(item.path().filename().string().rfind(".incoming-", 0), std::string::npos) << item.path();
  }
}

TEST_F(EngineCacheApiTest, PutFileKeepsACopyAndAnEmptyPlanIsRefused) {
  const std::unique_ptr<EngineCache> cache = Open();
  const CacheKey key = CacheKeyFromText("file");
  std::ofstream(dir_ + "/a.engine", std::ios::binary) << "ENGINE";
  ASSERT_TRUE(cache->PutFile(key, dir_ + "/a.engine", 1).stored);
  fs::remove(dir_ + "/a.engine");
  EXPECT_EQ(cache->Get(key).plan, Bytes("ENGINE"));
  const CacheStoreResult empty = cache->Put(key, nullptr, 0, 1);
  EXPECT_FALSE(empty.stored);
  EXPECT_FALSE(empty.error.empty());
  EXPECT_FALSE(cache->PutFile(key, dir_ + "/absent.engine", 1).stored);
}

TEST_F(EngineCacheApiTest, AKeyNotMadeByTheApiIsAnErrorNotAFolder) {
  const std::unique_ptr<EngineCache> cache = Open();
  CacheKey forged = CacheKeyFromText("x");
  forged.digest = "../../etc";
  const CachedEngine found = cache->Get(forged);
  EXPECT_EQ(found.status, CacheStatus::kError);
  EXPECT_NE(found.error.find("CacheKeyFromText"), std::string::npos) << found.error;
  forged = CacheKeyFromText("x");
  forged.parts.back().second = "y";
  EXPECT_EQ(cache->Find(forged).status, CacheStatus::kError);
  EXPECT_FALSE(cache->Put(forged, "p", 1, 1).stored);
}

TEST_F(EngineCacheApiTest, ADamagedEntryIsAMissWithAWarning) {
  const std::unique_ptr<EngineCache> cache = Open();
  const CacheKey key = CacheKeyFromText("damaged");
  ASSERT_TRUE(cache->Put(key, "PLAN", 4, 1).stored);
  const std::string path = cache->Find(key).path;
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);  // entries are read-only
  std::ofstream(path, std::ios::binary | std::ios::app) << "more";
  const CachedEngine found = cache->Get(key);
  EXPECT_EQ(found.status, CacheStatus::kMiss);
  EXPECT_NE(found.warning.find("damaged"), std::string::npos) << found.warning;
}

// One byte flipped in place, the size and time stamp kept: only the digest can tell.
void FlipFirstByte(const std::string& path) {
  const fs::file_time_type stamp = fs::last_write_time(path);
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  const char byte = static_cast<char>(file.get() ^ 0x20);
  file.seekp(0);
  file.put(byte);
  file.close();
  fs::last_write_time(path, stamp);
}

TEST_F(EngineCacheApiTest, AFlippedByteIsAMissForGetFindAndGetOrBuild) {
  const std::unique_ptr<EngineCache> cache = Open();
  const CacheKey key = CacheKeyFromText("flipped");
  for (int round = 0; round < 2; ++round) {  // Get, then Find
    ASSERT_TRUE(cache->Put(key, "PLAN-BYTES", 10, 1).stored);
    FlipFirstByte(cache->Find(key).path);
    const CachedEngine found = round == 0 ? cache->Get(key) : cache->Find(key);
    EXPECT_EQ(found.status, CacheStatus::kMiss) << round;
    EXPECT_TRUE(found.plan.empty());
    EXPECT_NE(found.warning.find("quarantined in " + cache->folder() + "/quarantine/" + key.digest), std::string::npos)
        << found.warning;
  }
  ASSERT_TRUE(cache->Put(key, "PLAN-BYTES", 10, 1).stored);
  FlipFirstByte(cache->Find(key).path);
  int builds = 0;
  const CachedEngine rebuilt = cache->GetOrBuild(key, [&] {
    ++builds;
    return Bytes("PLAN-BYTES");
  });
  EXPECT_EQ(rebuilt.status, CacheStatus::kMiss);
  EXPECT_NE(rebuilt.warning.find("damaged"), std::string::npos) << rebuilt.warning;
  EXPECT_TRUE(rebuilt.stored);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(cache->Get(key).plan, Bytes("PLAN-BYTES")) << "a good entry replaced the damaged one";
  EXPECT_EQ(std::distance(fs::directory_iterator(cache->folder() + "/quarantine"), fs::directory_iterator()), 3);
}

TEST_F(EngineCacheApiTest, OpeningWithoutAFolderNamesTheVariable) {
  ::unsetenv("TRTWATCH_ENGINE_CACHE");
  const EngineCacheOpened opened = EngineCache::Open();
  EXPECT_FALSE(opened.cache);
  EXPECT_NE(opened.error.find("TRTWATCH_ENGINE_CACHE"), std::string::npos) << opened.error;
  ::setenv("TRTWATCH_ENGINE_CACHE", (dir_ + "/from-env").c_str(), 1);
  const EngineCacheOpened from_env = EngineCache::Open();
  ::unsetenv("TRTWATCH_ENGINE_CACHE");
  ASSERT_TRUE(from_env.cache) << from_env.error;
  EXPECT_EQ(from_env.cache->folder(), dir_ + "/from-env/v1");
  EngineCacheOptions zero = In(dir_);
  zero.max_bytes = 0;
  EXPECT_FALSE(EngineCache::Open(zero).cache);
}

TEST_F(EngineCacheApiTest, GetOrBuildBuildsOnceThenHits) {
  const std::unique_ptr<EngineCache> cache = Open();
  const CacheKey key = Key(Source());
  int builds = 0;
  const auto build = [&] {
    ++builds;
    return Bytes("BUILT");
  };
  const CachedEngine first = cache->GetOrBuild(key, build, "model.onnx");
  EXPECT_EQ(first.status, CacheStatus::kMiss);
  EXPECT_TRUE(first.stored) << first.warning;
  EXPECT_EQ(first.plan, Bytes("BUILT"));
  const CachedEngine second = cache->GetOrBuild(key, build);
  EXPECT_TRUE(second.hit());
  EXPECT_EQ(second.plan, Bytes("BUILT"));
  EXPECT_EQ(builds, 1);
}

TEST_F(EngineCacheApiTest, AFailedOrThrowingBuildStoresNothingAndReleasesTheKey) {
  const std::unique_ptr<EngineCache> cache = Open();
  const CacheKey key = CacheKeyFromText("fails");
  const CachedEngine failed = cache->GetOrBuild(key, [] { return std::vector<char>{}; });
  EXPECT_EQ(failed.status, CacheStatus::kError);
  EXPECT_FALSE(failed.stored);
  EXPECT_THROW(cache->GetOrBuild(key, []() -> std::vector<char> { throw std::runtime_error("boom"); }),
               std::runtime_error);
  EXPECT_EQ(cache->Get(key).status, CacheStatus::kMiss) << "the lock went with the exception";
  EXPECT_TRUE(cache->GetOrBuild(key, [] { return Bytes("OK"); }).stored);
}

TEST_F(EngineCacheApiTest, IdenticalGetOrBuildsAtOnceBuildOnce) {
  const CacheKey key = CacheKeyFromText("at once");
  std::atomic<int> builds{0};
  std::vector<CachedEngine> results(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      const std::unique_ptr<EngineCache> cache = EngineCache::Open(In(dir_ + "/cache")).cache;
      results[i] = cache->GetOrBuild(key, [&] {
        ++builds;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return Bytes("ONCE");
      });
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(builds.load(), 1);
  int hits = 0;
  for (const CachedEngine& r : results) {
    EXPECT_EQ(r.plan, Bytes("ONCE"));
    hits += r.hit() ? 1 : 0;
  }
  EXPECT_EQ(hits, 3);
}

TEST_F(EngineCacheApiTest, UnderAWatchTheStreamAndResultSayMissThenHit) {
  const std::unique_ptr<EngineCache> cache = Open();
  const CacheKey key = Key(Source());
  int builds = 0;
  const auto build = [&] {
    ++builds;
    return Bytes("WATCHED");
  };
  const auto watched = [&](std::shared_ptr<trtwatch::testing::RecordingSink> sink) {
    WatchOptions options;
    options.progress = Progress::kQuiet;
    options.model = "model.onnx";
    options.no_history = true;
    options.sinks.push_back(sink);
    Watch watch(options);
    return cache->GetOrBuild(key, watch, build);
  };
  auto first_sink = std::make_shared<trtwatch::testing::RecordingSink>();
  const CachedEngine first = watched(first_sink);
  ASSERT_TRUE(first.result);
  EXPECT_TRUE(first.result->succeeded());
  EXPECT_EQ(first.result->cache.state, "miss");
  EXPECT_EQ(first.result->cache.key, key.digest) << "the watch knows the build by the cache's key";
  EXPECT_TRUE(first.stored);
  const std::vector<Event> events = first_sink->events();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().cache.state, "miss");
  EXPECT_EQ(events.front().cache.key, key.digest);

  auto second_sink = std::make_shared<trtwatch::testing::RecordingSink>();
  const CachedEngine second = watched(second_sink);
  EXPECT_TRUE(second.hit());
  ASSERT_TRUE(second.result);
  EXPECT_TRUE(second.result->succeeded());
  EXPECT_EQ(second.result->cache.state, "hit");
  ASSERT_TRUE(second.result->cache.built_seconds);
  EXPECT_EQ(second_sink->events().front().cache.state, "hit");
  EXPECT_EQ(second.plan, Bytes("WATCHED"));
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(cache->Stats().entries, 1u);
}

TEST_F(EngineCacheApiTest, AFailedWatchedBuildIsAnErrorWithTheWatchsResult) {
  const std::unique_ptr<EngineCache> cache = Open();
  WatchOptions options;
  options.progress = Progress::kQuiet;
  options.no_history = true;
  Watch watch(options);
  const CachedEngine failed =
      cache->GetOrBuild(CacheKeyFromText("watched failure"), watch, []() -> std::vector<char> {
        throw std::runtime_error("the parser refused the model");
      });
  EXPECT_EQ(failed.status, CacheStatus::kError);
  ASSERT_TRUE(failed.result);
  EXPECT_EQ(failed.result->status, BuildStatus::kFailed);
  EXPECT_NE(failed.error.find("the parser refused the model"), std::string::npos) << failed.error;
  EXPECT_EQ(cache->Stats().entries, 0u);
}

}  // namespace
}  // namespace trtwatch
