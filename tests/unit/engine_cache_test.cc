// The engine cache through the one build path (runner + TensorRtBackend on the
// TensorRT double): the second identical build is a hit that creates no builder,
// failed builds store nothing, a damaged entry is rebuilt (a flipped byte too, caught
// by the digest while the hit is placed, and quarantined), a placed engine never shares
// the entry's file, identical builds at once build once, and pruning keeps the most
// recently used.
#include "cache/engine_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "backends/tensorrt/tensorrt_backend.h"
#include "fake_tensorrt.h"
#include "keys/tensorrt_key.h"
#include "platform/atomic_file.h"
#include "platform/shared_library.h"
#include "runner/runner.h"
#include "support/onnx_model.h"
#include "support/recording_sink.h"
#include "support/fake_tensorrt_library.h"
#include "support/temp_dir_test.h"

namespace trtwatch {
namespace {

namespace fs = std::filesystem;
using trtwatch::testing::FakeTensorRt;

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Damage as a disk or a stray tool does: one byte flipped in place, the size and the
// modification time kept (entries are read-only: made writable first, as root could).
void FlipOneByte(const std::string& path, std::streamoff at) {
  const fs::file_time_type stamp = fs::last_write_time(path);
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekg(at);
  const char byte = static_cast<char>(file.get() ^ 0x01);
  file.seekp(at);
  file.put(byte);
  file.close();
  fs::last_write_time(path, stamp);
}

ino_t Inode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

class EngineCacheTest : public trtwatch::testing::TempDirTest {
 protected:
  void SetUp() override {
    fake_trt::Reset();
    TempDirTest::SetUp();
    std::ofstream(dir_ + "/model.onnx", std::ios::binary) << trtwatch::testing::OnnxModel({trtwatch::testing::Tensor("w", "")});
    options_.model = dir_ + "/model.onnx";
    options_.output = dir_ + "/model.engine";
    cache_dir_ = dir_ + "/cache";
  }
  void TearDown() override {
    fs::remove_all(dir_);
    fake_trt::Reset();
  }

  struct Run {
    BuildResult result;
    std::vector<Event> events;
    bool reused = false;
  };
  // One `trtwatch build --engine-cache` of options_, as build_command.cc assembles it.
  Run Build(const std::string& output) const {
    trt::BuildOptions options = options_;
    options.output = output;
    trt::TensorRtBackend backend(options, FakeTensorRt(), {TRTWATCH_FAKE_NVML, TRTWATCH_FAKE_CUDA});
    trtwatch::testing::RecordingSink sink;
    RunOptions run;
    run.output.progress = "quiet";
    run.handle_signals = false;
    run.stderr_is_terminal = false;
    run.sinks = {&sink};
    run.key_recipe = keys::TensorRtKeyRecipe(options, keys::TargetFromFacts(backend.Describe().facts));
    run.engine_cache = RunOptions::EngineCacheUse{cache_dir_, output, options.model, limits_};
    std::string error;
    std::unique_ptr<Runner> runner = Runner::Create(run, &error);
    EXPECT_NE(runner, nullptr) << error;
    Run result;
    result.result = runner->Run(backend.Describe(), [&](Monitor& m) { return backend.Build(m); });
    result.reused = runner->reused();
    result.events = sink.events();
    return result;
  }
  Run Build() const { return Build(options_.output); }
  std::string EntryEngine(const Run& run) const { return cache_dir_ + "/v1/" + run.result.cache.key + "/engine"; }
  static std::vector<std::string> Warnings(const Run& run) {
    std::vector<std::string> warnings;
    for (const Event& e : run.events) {
      if (e.type == EventType::kLog && e.severity == Severity::kWarning) warnings.push_back(e.message);
    }
    return warnings;
  }

  trt::BuildOptions options_;
  std::string cache_dir_;
  cache::CacheLimits limits_;
};

TEST_F(EngineCacheTest, TheSecondIdenticalBuildIsAHitThatCreatesNoBuilder) {
  fake_trt::GetScript().engine = "ENGINE-BYTES-1";
  const Run first = Build();
  ASSERT_TRUE(first.result.succeeded()) << first.result.error;
  EXPECT_EQ(first.result.cache.state, "miss");
  EXPECT_EQ(first.result.cache.key.size(), 64u);
  EXPECT_EQ(first.events.front().cache.state, "miss");
  EXPECT_EQ(fake_trt::GetRecord().builders_created.load(), 1);
  EXPECT_EQ(Contents(EntryEngine(first)), "ENGINE-BYTES-1");

  fs::remove(options_.output);
  const Run second = Build();
  EXPECT_TRUE(second.reused);
  EXPECT_TRUE(second.result.succeeded()) << second.result.error;
  EXPECT_EQ(fake_trt::GetRecord().builders_created.load(), 1) << "a hit created a builder";
  EXPECT_EQ(Contents(options_.output), "ENGINE-BYTES-1");
  ASSERT_EQ(second.events.front().type, EventType::kBuildStart);
  EXPECT_EQ(second.events.front().cache.state, "hit");
  EXPECT_EQ(second.events.front().cache.key, first.result.cache.key);
  ASSERT_TRUE(second.events.front().cache.built_seconds.has_value());
  EXPECT_EQ(second.events.back().type, EventType::kBuildFinish);
  EXPECT_EQ(second.events.back().cache.state, "hit");
  EXPECT_EQ(second.result.exit_code, exit_code::kSucceeded);

  // And once more over the engine it placed: the output is whole, nothing left behind.
  const Run third = Build();
  EXPECT_TRUE(third.reused);
  EXPECT_EQ(Contents(options_.output), "ENGINE-BYTES-1");
  for (const auto& item : fs::directory_iterator(dir_)) {
    EXPECT_EQ(item.path().filename().string().find(".trtwatch-"), std::string::npos) << item.path();
  }
  auto opened = cache::EngineCache::Open(cache_dir_);
  ASSERT_TRUE(opened.cache);
  const cache::CacheStats stats = opened.cache->Stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.bytes_reused, 2 * std::string("ENGINE-BYTES-1").size());
}

TEST_F(EngineCacheTest, AnotherKeyIsAMissAndFailedBuildsStoreNothing) {
  ASSERT_EQ(Build().result.cache.state, "miss");
  options_.optimization_level = 5;  // another engine
  fake_trt::GetScript().build_fails = true;
  const Run failed = Build();
  EXPECT_FALSE(failed.result.succeeded());
  EXPECT_EQ(failed.result.cache.state, "miss");
  EXPECT_FALSE(fs::exists(cache_dir_ + "/v1/" + failed.result.cache.key));
  fake_trt::GetScript().build_fails = false;
  const Run retried = Build();
  EXPECT_FALSE(retried.reused);
  EXPECT_TRUE(retried.result.succeeded());
  EXPECT_EQ(fake_trt::GetRecord().builders_created.load(), 3);
}

TEST_F(EngineCacheTest, ADamagedEntryIsAMissWithAWarningAndIsRebuilt) {
  fake_trt::GetScript().engine = "GOOD-ENGINE";
  const Run first = Build();
  ASSERT_TRUE(first.result.succeeded());
  fs::permissions(EntryEngine(first), fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(EntryEngine(first), std::ios::binary | std::ios::app) << "X";  // one byte more
  const Run second = Build();
  EXPECT_FALSE(second.reused);
  EXPECT_EQ(second.result.cache.state, "miss");
  ASSERT_EQ(Warnings(second).size(), 1u);
  EXPECT_NE(Warnings(second)[0].find("damaged"), std::string::npos) << Warnings(second)[0];
  EXPECT_EQ(Contents(options_.output), "GOOD-ENGINE");
  EXPECT_EQ(Contents(EntryEngine(second)), "GOOD-ENGINE");  // stored again
  EXPECT_EQ(fake_trt::GetRecord().builders_created.load(), 2);
}

TEST_F(EngineCacheTest, AFlippedByteKeepingSizeAndTimeIsQuarantinedAndRebuilt) {
  fake_trt::GetScript().engine = "GOOD-ENGINE-BYTES";
  const Run first = Build(dir_ + "/a.engine");
  ASSERT_TRUE(first.result.succeeded());
  FlipOneByte(EntryEngine(first), 5);
  const Run second = Build(dir_ + "/b.engine");
  EXPECT_FALSE(second.reused) << "a damaged engine was placed as a hit";
  EXPECT_TRUE(second.result.succeeded()) << second.result.error;
  EXPECT_EQ(second.result.cache.state, "miss");
  ASSERT_EQ(Warnings(second).size(), 1u);
  EXPECT_NE(Warnings(second)[0].find("quarantined in " + cache_dir_ + "/v1/quarantine/" + first.result.cache.key),
            std::string::npos)
      << Warnings(second)[0];
  EXPECT_EQ(Contents(dir_ + "/b.engine"), "GOOD-ENGINE-BYTES");
  EXPECT_EQ(Contents(dir_ + "/a.engine"), "GOOD-ENGINE-BYTES") << "the damage spread to an earlier build's engine";
  EXPECT_EQ(Contents(EntryEngine(second)), "GOOD-ENGINE-BYTES") << "a good entry replaces the damaged one";
  EXPECT_EQ(fake_trt::GetRecord().builders_created.load(), 2);
  auto opened = cache::EngineCache::Open(cache_dir_);
  ASSERT_TRUE(opened.cache);
  const std::vector<cache::Quarantined> aside = opened.cache->Quarantine();
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(aside[0].key, first.result.cache.key);
  EXPECT_NE(aside[0].reason.find("bytes are not the ones stored"), std::string::npos) << aside[0].reason;
  EXPECT_TRUE(Build(dir_ + "/c.engine").reused) << "the replacement is a hit";
}

TEST_F(EngineCacheTest, APlacedEngineNeverSharesTheEntrysFile) {
  fake_trt::GetScript().engine = "ENGINE";
  const Run first = Build(dir_ + "/a.engine");
  const Run second = Build(dir_ + "/b.engine");
  ASSERT_TRUE(second.reused);
  const std::string entry = EntryEngine(first);
  // A reflink (copy on write) has an inode of its own too: no placement shares one.
  EXPECT_NE(Inode(entry), Inode(dir_ + "/a.engine")) << "the build's output was linked into the cache";
  EXPECT_NE(Inode(entry), Inode(dir_ + "/b.engine")) << "the hit was placed by a hard link";
  EXPECT_EQ(fs::status(entry).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read)
      << "entries are read-only";
  // Damage to the entry now reaches no placed engine; verifying finds it.
  FlipOneByte(entry, 0);
  EXPECT_EQ(Contents(dir_ + "/a.engine"), "ENGINE");
  EXPECT_EQ(Contents(dir_ + "/b.engine"), "ENGINE");
  auto opened = cache::EngineCache::Open(cache_dir_);
  ASSERT_TRUE(opened.cache);
  const std::vector<cache::EntryCheck> checked = opened.cache->CheckAll(/*repair=*/false);
  ASSERT_EQ(checked.size(), 1u);
  EXPECT_FALSE(checked[0].damage.empty());
  EXPECT_TRUE(fs::exists(entry)) << "checking without repair changes nothing";
  const std::vector<cache::EntryCheck> repaired = opened.cache->CheckAll(/*repair=*/true);
  ASSERT_EQ(repaired.size(), 1u);
  EXPECT_FALSE(repaired[0].quarantined.empty()) << repaired[0].error;
  EXPECT_FALSE(fs::exists(entry));
  EXPECT_TRUE(opened.cache->CheckAll(false).empty());
}

TEST_F(EngineCacheTest, IdenticalBuildsAtOnceBuildOnce) {
  fake_trt::GetScript().step_ms = 5;  // long enough for the other to arrive meanwhile
  // The GPU stand-ins stay loaded from here on: each thread's backend then only takes
  // another reference, and ThreadSanitizer, which cannot see the dynamic loader's own
  // lock, does not take the loader's first writes for a race between the two builds.
  std::string error;
  const auto nvml = SharedLibrary::Open(TRTWATCH_FAKE_NVML, &error);
  const auto cuda = SharedLibrary::Open(TRTWATCH_FAKE_CUDA, &error);
  ASSERT_TRUE(nvml && cuda) << error;
  Run a, b;
  std::thread first([&] { a = Build(dir_ + "/a.engine"); });
  std::thread second([&] { b = Build(dir_ + "/b.engine"); });
  first.join();
  second.join();
  EXPECT_TRUE(a.result.succeeded() && b.result.succeeded());
  EXPECT_EQ(fake_trt::GetRecord().builders_created.load(), 1);
  EXPECT_NE(a.reused, b.reused) << "exactly one of them reuses the other's engine";
  EXPECT_EQ(Contents(dir_ + "/a.engine"), Contents(dir_ + "/b.engine"));
}

TEST_F(EngineCacheTest, PruningKeepsTheMostRecentlyUsed) {
  limits_.max_entries = 2;
  std::vector<std::string> keys;
  for (int level : {1, 2, 3}) {
    options_.optimization_level = level;
    keys.push_back(Build().result.cache.key);
  }
  auto opened = cache::EngineCache::Open(cache_dir_);
  ASSERT_TRUE(opened.cache);
  std::vector<std::string> listed;
  for (const cache::CacheEntry& entry : opened.cache->List()) listed.push_back(entry.key);
  EXPECT_EQ(listed, (std::vector<std::string>{keys[2], keys[1]}));
  // A hit makes an entry the most recent: pruning to one keeps it.
  options_.optimization_level = 2;
  ASSERT_TRUE(Build().reused);
  EXPECT_EQ(opened.cache->Prune({uint64_t{1} << 40, 1}), (std::vector<std::string>{keys[2]}));
  ASSERT_EQ(opened.cache->List().size(), 1u);
  EXPECT_EQ(opened.cache->List()[0].key, keys[1]);
}

TEST_F(EngineCacheTest, PruningRemovesWhatADeadStoreLeftButNotOneInProgress) {
  auto opened = cache::EngineCache::Open(cache_dir_);
  ASSERT_TRUE(opened.cache);
  const fs::path dead = fs::path(cache_dir_) / "v1" / ".incoming-0123456789abcdef-dead0000";
  const fs::path running = fs::path(cache_dir_) / "v1" / ".incoming-0123456789abcdef-live0000";
  fs::create_directories(dead);
  fs::create_directories(running);
  fs::last_write_time(dead, fs::file_time_type::clock::now() - std::chrono::hours(25));
  opened.cache->Prune(limits_);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(running));
}

// An engine of several copy pieces (AtomicFile::kCopyPiece), not a whole number of them,
// every 4 KiB block numbered so that a misplaced piece would differ too.
std::string LargeEngine() {
  std::string bytes(2 * AtomicFile::kCopyPiece + 4099, 'e');
  for (size_t at = 0; at < bytes.size(); at += 4096) bytes[at] = static_cast<char>(at / 4096 % 251);
  return bytes;
}

class EngineCachePlaceTest : public EngineCacheTest {
 protected:
  // The large engine stored under a key of its own; the entry as Find answers it.
  cache::CacheEntry StoreLarge() {
    opened_ = cache::EngineCache::Open(cache_dir_);
    EXPECT_TRUE(opened_.cache) << opened_.error;
    key_ = keys::BuildKey{"", {{"backend", "place-test"}}};
    key_.digest = keys::ComputeBuildKey({key_.parts, {}}).key->digest;
    EXPECT_TRUE(opened_.cache->StoreBytes(key_, "large", LargeEngine(), 1).stored);
    const cache::Lookup found = opened_.cache->Find(key_);
    EXPECT_EQ(found.outcome, cache::Lookup::Outcome::kHit);
    return found.entry.value_or(cache::CacheEntry{});
  }
  // What the output's folder holds besides the test's own files: a temporary left behind?
  std::vector<std::string> Temporaries() const {
    std::vector<std::string> left;
    for (const auto& item : fs::directory_iterator(dir_)) {
      if (item.path().filename().string().find(".trtwatch-") != std::string::npos) left.push_back(item.path());
    }
    return left;
  }

  cache::OpenOutcome opened_;
  keys::BuildKey key_;
};

TEST_F(EngineCachePlaceTest, AHitOfSeveralPiecesIsPlacedWholeCheckedAsPlacedAndCounted) {
  const cache::CacheEntry entry = StoreLarge();
  const cache::PlaceOutcome placed = opened_.cache->Place(entry, dir_ + "/hit.engine");
  ASSERT_TRUE(placed.method.has_value()) << placed.error;
  EXPECT_FALSE(placed.damaged);
  EXPECT_EQ(Contents(dir_ + "/hit.engine"), LargeEngine());
  EXPECT_TRUE(Temporaries().empty());
  EXPECT_EQ(opened_.cache->Stats().hits, 1u);
  EXPECT_EQ(opened_.cache->Stats().bytes_reused, LargeEngine().size());
}

TEST_F(EngineCachePlaceTest, AFlippedByteInALaterPieceIsAMissAndNothingIsPlaced) {
  const cache::CacheEntry entry = StoreLarge();
  std::ofstream(dir_ + "/hit.engine") << "AN EARLIER ENGINE";
  FlipOneByte(opened_.cache->EnginePath(entry), static_cast<std::streamoff>(2 * AtomicFile::kCopyPiece + 7));
  const cache::PlaceOutcome placed = opened_.cache->Place(entry, dir_ + "/hit.engine");
  EXPECT_FALSE(placed.method.has_value()) << "a damaged engine was placed";
  EXPECT_TRUE(placed.damaged);
  EXPECT_NE(placed.error.find("quarantined in " + cache_dir_ + "/v1/quarantine/" + entry.key), std::string::npos)
      << placed.error;
  EXPECT_EQ(Contents(dir_ + "/hit.engine"), "AN EARLIER ENGINE") << "the output changed before the check passed";
  EXPECT_TRUE(Temporaries().empty()) << "the placed bytes were left behind: " << Temporaries()[0];
  EXPECT_EQ(opened_.cache->Quarantine().size(), 1u);
  EXPECT_EQ(opened_.cache->Find(key_).outcome, cache::Lookup::Outcome::kMiss);
  EXPECT_EQ(opened_.cache->Stats().hits, 0u);
}

TEST_F(EngineCachePlaceTest, AnEngineGrownAfterItsCheckIsAMissToo) {
  const cache::CacheEntry entry = StoreLarge();
  const std::string engine = opened_.cache->EnginePath(entry);
  fs::permissions(engine, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(engine, std::ios::binary | std::ios::app) << "X";  // after Find: its size was right then
  const cache::PlaceOutcome placed = opened_.cache->Place(entry, dir_ + "/hit.engine");
  EXPECT_TRUE(placed.damaged);
  EXPECT_NE(placed.error.find("bytes, not the " + std::to_string(entry.size) + " stored"), std::string::npos)
      << placed.error;
  EXPECT_FALSE(fs::exists(dir_ + "/hit.engine"));
  EXPECT_TRUE(Temporaries().empty());
}

TEST_F(EngineCachePlaceTest, OnAnotherFileSystemTheBytesWrittenAreTheBytesChecked) {
  // /dev/shm (tmpfs): where the kernel cannot copy from the cache's file system, the
  // entry is read once and each piece hashed and written from the same buffer.
  if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm here";
  const std::string other = "/dev/shm/trtwatch-place-test-" + std::to_string(::getpid());
  fs::create_directories(other);
  const cache::CacheEntry entry = StoreLarge();
  const cache::PlaceOutcome good = opened_.cache->Place(entry, other + "/hit.engine");
  ASSERT_TRUE(good.method.has_value()) << good.error;
  EXPECT_EQ(Contents(other + "/hit.engine"), LargeEngine());
  FlipOneByte(opened_.cache->EnginePath(entry), static_cast<std::streamoff>(AtomicFile::kCopyPiece + 1));
  const cache::PlaceOutcome damaged = opened_.cache->Place(entry, other + "/again.engine");
  EXPECT_TRUE(damaged.damaged) << damaged.error;
  EXPECT_FALSE(fs::exists(other + "/again.engine"));
  size_t left = 0;
  for (const auto& item : fs::directory_iterator(other)) left += item.path().filename() == "hit.engine" ? 0 : 1;
  EXPECT_EQ(left, 0u) << "the placed bytes were left behind";
  fs::remove_all(other);
}

TEST_F(EngineCachePlaceTest, AnOutputThatCannotBeWrittenIsAnErrorNotDamage) {
  const cache::CacheEntry entry = StoreLarge();
  const cache::PlaceOutcome placed = opened_.cache->Place(entry, dir_ + "/no/such/folder/hit.engine");
  EXPECT_FALSE(placed.method.has_value());
  EXPECT_FALSE(placed.damaged);
  EXPECT_NE(placed.error.find("create the folder first"), std::string::npos) << placed.error;
  EXPECT_TRUE(opened_.cache->Quarantine().empty()) << "a good entry was quarantined";
  EXPECT_EQ(opened_.cache->Find(key_).outcome, cache::Lookup::Outcome::kHit);
}

TEST_F(EngineCacheTest, ACacheFolderThatCannotBeUsedIsAWarningNotAFailure) {
  std::ofstream(dir_ + "/file") << "x";
  cache_dir_ = dir_ + "/file";
  const Run run = Build();
  EXPECT_TRUE(run.result.succeeded());
  EXPECT_TRUE(run.result.cache.state.empty());
  ASSERT_EQ(Warnings(run).size(), 1u);
  EXPECT_NE(Warnings(run)[0].find("engine cache"), std::string::npos) << Warnings(run)[0];
}

}  // namespace
}  // namespace trtwatch
