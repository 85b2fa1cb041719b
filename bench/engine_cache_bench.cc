// The engine cache's performance goals (docs/cache.md), each against its baseline on
// the same files in the same run:
//
//   hit:    placing a 1 GiB cached engine at -o, every byte checked against its digest
//           while it is copied (or, with a reflink, read): goal within 1.2x of `cp` of
//           the same file, on the cache's file system and to tmpfs (another one). The
//           placement is durable (fsync'd) and `cp` is not: the same-file-system line
//           also shows `cp` followed by `sync FILE`.
//   verify: `trtwatch cache verify` of the cache's entries (VERIFY_GIB x 1 GiB, the
//           hit's entry among them), in GB/s, goal >= 1 GB/s on the 16-core machine;
//           against `cat` of the same files to /dev/null (the read alone).
//   key:    the build key of a 2 GiB model plus its external weights (1 GiB + 1 GiB),
//           goal within 1.3x of `sha256sum` of the same files.
//
// usage: trtwatch_engine_cache_bench [FOLDER] [COPY_FOLDER] [VERIFY_GIB]
//        (defaults: /tmp, /dev/shm, 2; the figure is VERIFY_GIB 10)
// Each figure is the median of 3 runs, caches warm (the baseline reads the same page
// cache). Prints one line per figure and ratio; exits 1 if a goal is missed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "cache/engine_cache.h"
#include "keys/build_key.h"

namespace fs = std::filesystem;
using trtwatch::cache::EngineCache;

namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

void WriteBytes(const fs::path& path, uint64_t size, char seed) {
  std::ofstream out(path, std::ios::binary);
  std::string block(1 << 20, seed);
  for (size_t i = 0; i < block.size(); i += 4096) block[i] = static_cast<char>(i / 4096);
  for (uint64_t written = 0; written < size; written += block.size()) out.write(block.data(), block.size());
}

double MedianSeconds(const std::function<void()>& work, const std::function<void()>& reset = nullptr) {
  std::vector<double> times;
  for (int i = 0; i < 3; ++i) {
    if (reset) reset();
    const auto start = std::chrono::steady_clock::now();
    work();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[1];
}

void Shell(const std::string& command) {
  if (std::system(command.c_str()) != 0) std::fprintf(stderr, "failed: %s\n", command.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path root = fs::path(argc > 1 ? argv[1] : "/tmp") / "trtwatch-cache-bench";
  const fs::path other = fs::path(argc > 2 ? argv[2] : "/dev/shm") / "trtwatch-cache-bench";
  const int verify_gib = std::clamp(argc > 3 ? std::atoi(argv[3]) : 2, 2, 64);
  fs::remove_all(root);
  fs::remove_all(other);
  fs::create_directories(root);
  fs::create_directories(other);
  bool goals_met = true;

  // --- hit: a 1 GiB engine stored, then placed.
  const fs::path engine = root / "built.engine";
  WriteBytes(engine, kGiB, 'e');
  trtwatch::keys::BuildKey key{std::string(64, 'a'), {{"backend", "bench"}}};
  key.digest = trtwatch::keys::ComputeBuildKey({key.parts, {}}).key->digest;
  trtwatch::cache::OpenOutcome opened = EngineCache::Open((root / "cache").string());
  if (!opened.cache) return std::fprintf(stderr, "%s\n", opened.error.c_str()), 2;
  const auto stored = opened.cache->Store(key, "bench", engine.string(), 60);
  if (!stored.stored) return std::fprintf(stderr, "%s\n", stored.error.c_str()), 2;
  const trtwatch::cache::CacheEntry entry = *opened.cache->Find(key).entry;
  fs::remove(engine);  // the entry keeps the bytes; -o is placed anew

  std::string method;
  const auto place = [&](const fs::path& output) {
    const trtwatch::cache::PlaceOutcome placed = opened.cache->Place(entry, output.string());
    method = placed.method ? trtwatch::cache::PlaceMethodName(*placed.method) : "FAILED: " + placed.error;
  };
  const std::string cached = (root / "cache" / "v1" / key.digest / "engine").string();
  const double same = MedianSeconds([&] { place(root / "hit.engine"); }, [&] { fs::remove(root / "hit.engine"); });
  const double cp_same = MedianSeconds([&] { Shell("cp " + cached + " " + (root / "cp.engine").string()); },
                                       [&] { fs::remove(root / "cp.engine"); });
  const double cp_sync = MedianSeconds(
      [&] { Shell("cp " + cached + " " + (root / "cp.engine").string() + " && sync " + (root / "cp.engine").string()); },
      [&] { fs::remove(root / "cp.engine"); });
  std::printf("verified hit, 1 GiB engine, same file system: %.1f ms (%s); cp: %.1f ms, ratio %.2f, goal <= 1.2: %s; "
              "cp + sync: %.1f ms, ratio %.2f\n",
              same * 1e3, method.c_str(), cp_same * 1e3, same / cp_same, same / cp_same <= 1.2 ? "met" : "MISSED",
              cp_sync * 1e3, same / cp_sync);
  goals_met &= same / cp_same <= 1.2 || method == "reflink";
  fs::remove(root / "hit.engine");

  const double copy = MedianSeconds([&] { place(other / "hit.engine"); }, [&] { fs::remove(other / "hit.engine"); });
  const double cp_other = MedianSeconds([&] { Shell("cp " + cached + " " + (other / "cp.engine").string()); },
                                        [&] { fs::remove(other / "cp.engine"); });
  std::printf("verified hit, 1 GiB engine, another file system: %.1f ms (%s); cp: %.1f ms; ratio %.2f, goal <= 1.2: %s\n",
              copy * 1e3, method.c_str(), cp_other * 1e3, copy / cp_other, copy / cp_other <= 1.2 ? "met" : "MISSED");
  goals_met &= copy / cp_other <= 1.2;
  fs::remove_all(other);

  // --- verify: more 1 GiB entries beside the first, then every byte of all of them.
  for (int i = 1; i < verify_gib; ++i) {
    WriteBytes(engine, kGiB, static_cast<char>('f' + i));
    trtwatch::keys::BuildKey more_key{"", {{"backend", "bench-" + std::to_string(i)}}};
    more_key.digest = trtwatch::keys::ComputeBuildKey({more_key.parts, {}}).key->digest;
    if (!opened.cache->Store(more_key, "bench", engine.string(), 60).stored) return 2;
    fs::remove(engine);
  }
  size_t damaged = 0;
  const double verified = MedianSeconds([&] {
    damaged = 0;
    for (const auto& check : opened.cache->CheckAll(false)) damaged += check.damage.empty() ? 0 : 1;
  });
  const double cat = MedianSeconds([&] { Shell("cat " + (root / "cache" / "v1" / "*" / "engine").string() + " > /dev/null"); });
  const double verify_bytes = static_cast<double>(verify_gib * kGiB);
  std::printf("cache verify, %d entries of 1 GiB: %.0f ms (%.2f GB/s, goal >= 1: %s, %zu damaged); "
              "cat > /dev/null: %.0f ms (%.2f GB/s)\n",
              verify_gib, verified * 1e3, verify_bytes / verified / 1e9, verify_bytes / verified >= 1e9 ? "met" : "MISSED",
              damaged, cat * 1e3, verify_bytes / cat / 1e9);
  goals_met &= damaged == 0;

  // --- key: a 2 GiB model as a 1 GiB graph file and 1 GiB of external weights.
  WriteBytes(root / "model.onnx", kGiB, 'm');
  WriteBytes(root / "model.weights", kGiB, 'w');
  const trtwatch::keys::KeyRecipe recipe{{{"backend", "bench"}},
                                          {{"model.sha256", (root / "model.onnx").string()},
                                           {"model.external_data[model.weights].sha256", (root / "model.weights").string()}}};
  const double keyed = MedianSeconds([&] { trtwatch::keys::ComputeBuildKey(recipe); });
  const double sha256sum = MedianSeconds(
      [&] { Shell("sha256sum " + (root / "model.onnx").string() + " " + (root / "model.weights").string() + " > /dev/null"); });
  std::printf("key, 2 GiB model + weights: %.0f ms (%.2f GB/s); sha256sum: %.0f ms; ratio %.2f, goal <= 1.3: %s\n",
              keyed * 1e3, 2 * kGiB / keyed / 1e9, sha256sum * 1e3, keyed / sha256sum,
              keyed / sha256sum <= 1.3 ? "met" : "MISSED");
  goals_met &= keyed / sha256sum <= 1.3;
  fs::remove_all(root);
  return goals_met ? 0 : 1;
}
