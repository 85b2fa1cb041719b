// AfterBuild: engines, timing-cache copies and downloads around a build's end.
#include "builds/after_build.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "builds/build_record.h"
#include "builds/build_request.h"
#include "cache/engine_cache.h"
#include "builds/stores/record_store.h"
#include "builds/stores/sqlite_store.h"

namespace trtwatch::builds {
namespace {

namespace fs = std::filesystem;

class AfterBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/trtwatch-after-build-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = fs::canonical(pattern).string();
    StoreOpening opened = SqliteStore::Open(dir_);
    store_ = std::move(opened.store);
    ASSERT_TRUE(store_) << opened.error;
    after_ = std::make_unique<AfterBuild>(*store_, dir_);
  }
  void TearDown() override {
    after_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  static void Write(const std::string& path, const std::string& bytes) { std::ofstream(path) << bytes; }

  std::string dir_;
  std::unique_ptr<RecordStore> store_;
  std::unique_ptr<AfterBuild> after_;
};

// Why: a download's ETag and the record's size come from the engine as stored.
TEST_F(AfterBuildTest, ASucceededEngineIsMovedIntoPlaceAndHashed) {
  BuildRecord r;
  r.id = "b-1";
  r.state = BuildState::kSucceeded;
  Write(after_->PartialEngine(r.id), "engine bytes");
  after_->StoreEngine(r, "");
  EXPECT_EQ(r.state, BuildState::kSucceeded);
  EXPECT_EQ(r.engine, after_->engine_dir() + "/b-1.engine");
  EXPECT_EQ(r.engine_bytes, 12u);
  EXPECT_FALSE(r.engine_sha256.empty());
  EXPECT_FALSE(fs::exists(after_->PartialEngine(r.id)));

  const ArtifactResult a = after_->Artifact(r, ArtifactKind::kEngine);
  ASSERT_EQ(a.outcome, ArtifactOutcome::kFound) << a.error;
  EXPECT_EQ(a.path, r.engine);
  EXPECT_EQ(a.file.size, 12u);
}

// Why: a placed engine damaged in place must be served with the digest it should have,
// so the record's digest and ETag come from the engine cache's verified entry, never
// from hashing the placed file (issue 38).
TEST_F(AfterBuildTest, AnEngineFromTheCacheTakesTheEntrysDigestNotTheBytesPlaced) {
  const std::string cache_dir = dir_ + "/engine-cache";
  const cache::OpenOutcome opened = cache::EngineCache::Open(cache_dir);
  ASSERT_TRUE(opened.cache) << opened.error;
  const keys::BuildKey key{std::string(64, 'd'), {{"model", "m"}}};
  ASSERT_TRUE(opened.cache->StoreBytes(key, "m", "engine bytes", 1.0).stored);
  const std::optional<cache::CacheEntry> entry = opened.cache->Recorded(key.digest);
  ASSERT_TRUE(entry);
  BuildRecord r;
  r.id = "b-4";
  r.state = BuildState::kSucceeded;
  r.cache = RecordCache{"hit", key.digest, 1.0, 1.0};
  Write(after_->PartialEngine(r.id), "ENGINE BYTES");  // damaged on the way: same size, other bytes
  after_->StoreEngine(r, cache_dir);
  EXPECT_EQ(r.engine_sha256, entry->sha256);
  EXPECT_EQ(r.engine_bytes, 12u);
  const ArtifactResult a = after_->Artifact(r, ArtifactKind::kEngine);
  ASSERT_EQ(a.outcome, ArtifactOutcome::kFound) << a.error;
  EXPECT_EQ(a.file.sha256, entry->sha256);  // what the download's ETag and Repr-Digest say
  // No entry for the key (pruned, or a build that kept none): the placed file, hashed once.
  BuildRecord other = r;
  other.id = "b-5";
  other.cache = RecordCache{"miss", std::string(64, 'f'), std::nullopt, std::nullopt};
  Write(after_->PartialEngine(other.id), "ENGINE BYTES");
  after_->StoreEngine(other, cache_dir);
  EXPECT_NE(other.engine_sha256, entry->sha256);
  EXPECT_EQ(other.engine_sha256.size(), 64u);
}

// Why: "succeeded" without an engine would hand clients a 404 for a build that says it worked.
TEST_F(AfterBuildTest, SuccessWithoutAnEngineFailsTheBuild) {
  BuildRecord r;
  r.id = "b-2";
  r.state = BuildState::kSucceeded;
  after_->StoreEngine(r, "");
  EXPECT_EQ(r.state, BuildState::kFailed);
  EXPECT_EQ(r.error, "the worker reported success but left no engine at " + after_->PartialEngine("b-2"));
}

TEST_F(AfterBuildTest, TheTimingCacheIsCopiedSoLaterBuildsMayChangeTheOriginal) {
  const std::string cache = dir_ + "/caches/model.cache";
  Write(cache, "tactics");
  BuildRequest request;
  request.options = {{"timing-cache", cache}};
  BuildRecord r;
  r.id = "b-3";
  after_->StoreTimingCache(r, request);
  ASSERT_EQ(r.timing_cache, after_->engine_dir() + "/b-3.timing-cache");
  EXPECT_EQ(r.timing_cache_bytes, 7u);
  Write(cache, "changed later");
  std::ifstream copy(r.timing_cache);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(copy), {}), "tactics");
}

// Why: a client asking for a file it cannot have is told why, and when to ask again.
TEST_F(AfterBuildTest, ADownloadThatCannotBeSaysWhy) {
  BuildRecord running;
  running.id = "b-4";
  running.state = BuildState::kRunning;
  EXPECT_EQ(after_->Artifact(running, ArtifactKind::kEngine).outcome, ArtifactOutcome::kNotYet);

  BuildRecord simulated;
  simulated.id = "b-5";
  simulated.state = BuildState::kSucceeded;
  simulated.backend = "simulated";
  const ArtifactResult none = after_->Artifact(simulated, ArtifactKind::kEngine);
  EXPECT_EQ(none.outcome, ArtifactOutcome::kNone);
  EXPECT_EQ(none.error, "build b-5 has no engine: it was a simulated build, which makes no files");

  BuildRecord no_cache;
  no_cache.id = "b-6";
  no_cache.state = BuildState::kSucceeded;
  no_cache.backend = "tensorrt";
  EXPECT_EQ(after_->Artifact(no_cache, ArtifactKind::kTimingCache).error,
            "build b-6 has no timing cache: its request named no \"timing-cache\" option");

  BuildRecord gone = no_cache;
  gone.engine = after_->engine_dir() + "/b-6.engine";  // removed by retention
  EXPECT_EQ(after_->Artifact(gone, ArtifactKind::kEngine).error,
            "build b-6's engine is no longer stored (removed from " + after_->engine_dir() + ")");
}

TEST_F(AfterBuildTest, DroppingHistoryOfABuildWithoutOneIsQuiet) {
  after_->DropHistory("never-ran");
  after_->DropPartialEngine("never-ran");
  EXPECT_TRUE(fs::is_directory(after_->engine_dir()));
}

}  // namespace
}  // namespace trtwatch::builds
