// cached_engine: build_engine with the engine cache (docs/cache.md, "Around your own
// build code"). The second run with the same model, options, TensorRT and GPU reuses
// the first's engine instead of building; two runs at once build once.
//
//   cached_engine MODEL.onnx ENGINE [--cache DIR] [--progress auto|tty|plain|json|quiet]
//
// The cache is DIR, else TRTWATCH_ENGINE_CACHE. Prints "hit" or "miss" and the times;
// exits as `trtwatch build` does.
#include <trtwatch/tensorrt.h>
#include <trtwatch/trtwatch.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "onnx_engine.h"

namespace {

int Usage(const char* why) {
  std::fprintf(stderr,
               "cached_engine: %s\n"
               "usage: cached_engine MODEL.onnx ENGINE [--cache DIR] [--progress auto|plain|json|quiet]\n",
               why);
  return trtwatch::exit_code::kUsage;
}

bool Write(const std::vector<char>& plan, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  out.write(plan.data(), static_cast<std::streamsize>(plan.size()));
  return static_cast<bool>(out.flush());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage("give a model and an engine path");
  const std::string model = argv[1];
  const std::string engine = argv[2];
  trtwatch::EngineCacheOptions cache_options;  // folder "": TRTWATCH_ENGINE_CACHE
  trtwatch::WatchOptions watch_options;
  watch_options.model = model;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--cache") {
      cache_options.folder = argv[i + 1];
    } else if (flag == "--progress") {
      const std::string mode = argv[i + 1];
      watch_options.progress = mode == "json"    ? trtwatch::Progress::kJson
                               : mode == "plain" ? trtwatch::Progress::kPlain
                               : mode == "quiet" ? trtwatch::Progress::kQuiet
                                                 : trtwatch::Progress::kAuto;
    } else {
      return Usage(("unknown option " + flag).c_str());
    }
  }

  // 1. The key: the model's bytes, the settings below as text, TensorRT as loaded and
  //    the GPU CUDA numbers 0 (found by trtwatch).
  trtwatch::CacheKeySource source;
  source.models = {model};
  source.options = {"default config"};  // every builder setting that changes the engine, as text
  source.tensorrt_version = trtwatch::tensorrt::RuntimeVersion();
  const trtwatch::CacheKeyResult key = trtwatch::ComputeCacheKey(source);
  if (!key.ok()) return Usage(key.error.c_str());
  // 2. The cache.
  const trtwatch::EngineCacheOpened opened = trtwatch::EngineCache::Open(cache_options);
  if (!opened.cache) return Usage(opened.error.c_str());

  try {
    trtwatch::Watch watch(watch_options);
    trtwatch::tensorrt::ProgressMonitor monitor(watch);
    trtwatch::tensorrt::Logger logger(watch);
    // 3. The stored plan, or a build under the watch, stored when it succeeds.
    const trtwatch::CachedEngine found = opened.cache->GetOrBuild(*key.key, watch, [&] {
      const std::unique_ptr<nvinfer1::IHostMemory> plan = BuildSerializedEngine(model, logger, monitor);
      return plan ? trtwatch::PlanBytes(plan->data(), plan->size()) : std::vector<char>{};
    });
    if (!found.warning.empty()) std::fprintf(stderr, "cached_engine: warning: %s\n", found.warning.c_str());
    if (found.status == trtwatch::CacheStatus::kError && !found.result) return Usage(found.error.c_str());
    if (found.hit()) {
      std::fprintf(stderr, "hit: engine built %.1fs ago in %.1fs, key %s\n", found.age_seconds, found.build_seconds,
                   found.key.substr(0, 12).c_str());
    } else if (found.plan.size() > 0) {
      std::fprintf(stderr, "miss: built in %.1fs%s, key %s\n", found.build_seconds, found.stored ? ", stored" : "",
                   found.key.substr(0, 12).c_str());
    }
    if (!found.plan.empty() && !Write(found.plan, engine)) {
      std::fprintf(stderr, "cached_engine: cannot write %s\n", engine.c_str());
      return trtwatch::exit_code::kFailed;
    }
    return found.result->exit_code;
  } catch (const std::invalid_argument& e) {
    return Usage(e.what());
  }
}
