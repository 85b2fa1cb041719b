// Fake TensorRT builder and ONNX parser behind the TEST DOUBLE headers. Not NVIDIA
// code: a stand-in that behaves as TensorRT's documentation says, for CI.
#include "fake_tensorrt.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace fake_trt {

namespace {

std::unique_ptr<Script> NewScript();
std::unique_ptr<Script> g_script = NewScript();
std::unique_ptr<Record> g_record = std::make_unique<Record>();

class FakeHostMemory final : public nvinfer1::IHostMemory {
 public:
  explicit FakeHostMemory(std::string bytes) : bytes_(std::move(bytes)) {}
  void* data() const noexcept override { return const_cast<char*>(bytes_.data()); }
  std::size_t size() const noexcept override { return bytes_.size(); }

 private:
  std::string bytes_;
};

class FakeTensor final : public nvinfer1::ITensor {
 public:
  explicit FakeTensor(FakeInput input) : input_(std::move(input)) {}
  ~FakeTensor() noexcept override = default;
  char const* getName() const noexcept override { return input_.name.c_str(); }
  bool isShapeTensor() const noexcept override { return input_.shape_tensor; }
  nvinfer1::Dims getDimensions() const noexcept override {
    nvinfer1::Dims dims{};
    dims.nbDims = static_cast<int32_t>(input_.dims.size());
    for (size_t i = 0; i < input_.dims.size(); ++i) dims.d[i] = input_.dims[i];
    return dims;
  }

 private:
  FakeInput input_;
};

class FakeNetwork final : public nvinfer1::INetworkDefinition {
 public:
  int32_t getNbInputs() const noexcept override { return parsed_ ? static_cast<int32_t>(inputs_.size()) : 0; }
  nvinfer1::ITensor* getInput(int32_t index) const noexcept override {
    return index >= 0 && index < getNbInputs() ? inputs_[static_cast<size_t>(index)].get() : nullptr;
  }
  void Populate() {
    for (const FakeInput& input : g_script->inputs) inputs_.push_back(std::make_unique<FakeTensor>(input));
    parsed_ = true;
  }

 private:
  bool parsed_ = false;
  std::vector<std::unique_ptr<FakeTensor>> inputs_;
};

class FakeProfile final : public nvinfer1::IOptimizationProfile {
 public:
  ~FakeProfile() noexcept override = default;
  bool setDimensions(char const* inputName, nvinfer1::OptProfileSelector select,
                     nvinfer1::Dims const& dims) noexcept override {
    Record::DimsCall call{inputName, select, {}};
    for (int32_t i = 0; i < dims.nbDims; ++i) call.dims.push_back(dims.d[i]);
    g_record->dims_calls.push_back(std::move(call));
    for (int32_t i = 0; i < dims.nbDims; ++i) {
      if (dims.d[i] < 0) return false;
    }
    return true;
  }
#if NV_TENSORRT_MAJOR < 11
  bool setShapeValues(char const* inputName, nvinfer1::OptProfileSelector select, int32_t const* values,
                      int32_t n) noexcept override {
#else
  bool setShapeValuesV2(char const* inputName, nvinfer1::OptProfileSelector select, int64_t const* values,
                        int32_t n) noexcept override {
#endif
    Record::DimsCall call{inputName, select, {}};
    call.values = true;
    for (int32_t i = 0; i < n; ++i) call.dims.push_back(values[i]);
    g_record->dims_calls.push_back(std::move(call));
    return true;
  }
};

class FakeTimingCache final : public nvinfer1::ITimingCache {
 public:
  FakeTimingCache(std::string device, std::set<std::string> keys) : device_(std::move(device)), keys_(std::move(keys)) {}
  nvinfer1::IHostMemory* serialize() const noexcept override { return new FakeHostMemory(CacheBlob(device_, keys_)); }
  // TensorRT: entries from another device/version mismatch unless ignored.
  bool combine(nvinfer1::ITimingCache const& input, bool ignoreMismatch) noexcept override {
    const auto& other = static_cast<const FakeTimingCache&>(input);
    ++g_record->cache_combines;
    if (other.device_ != device_ && !ignoreMismatch) return false;
    keys_.insert(other.keys_.begin(), other.keys_.end());
    return true;
  }
  const std::string& device() const { return device_; }
  int entries() const { return static_cast<int>(keys_.size()); }
  // The timings measured by a build: keys named after the Script's cache_key.
  void Learn(int n) {
    const size_t first = keys_.size();
    for (int i = 0; i < n; ++i) keys_.insert(g_script->cache_key + std::to_string(first + static_cast<size_t>(i)));
  }

 private:
  std::string device_;
  std::set<std::string> keys_;
};

class FakeConfig final : public nvinfer1::IBuilderConfig {
 public:
  void setFlag(nvinfer1::BuilderFlag flag) noexcept override { g_record->flags.push_back(flag); }
  void clearFlag(nvinfer1::BuilderFlag flag) noexcept override { g_record->cleared_flags.push_back(flag); }
  bool setTacticSources(nvinfer1::TacticSources sources) noexcept override {
    g_record->tactic_sources = sources;
    return true;
  }
  nvinfer1::TacticSources getTacticSources() const noexcept override { return kDefaultTacticSources; }
  void setHardwareCompatibilityLevel(nvinfer1::HardwareCompatibilityLevel level) noexcept override {
    g_record->hardware_compatibility = level;
  }
  void setProfilingVerbosity(nvinfer1::ProfilingVerbosity verbosity) noexcept override {
    g_record->profiling_verbosity = verbosity;
  }
  void setDLACore(int32_t core) noexcept override { g_record->dla_core = core; }
  void setDefaultDeviceType(nvinfer1::DeviceType type) noexcept override { g_record->device_type = type; }
  void setPluginsToSerialize(char const* const* paths, int32_t n) noexcept override {
    for (int32_t i = 0; i < n; ++i) g_record->plugins_to_serialize.emplace_back(paths[i]);
  }
  void setMaxNbTactics(int32_t n) noexcept override { g_record->max_tactics = n; }
  bool setTilingOptimizationLevel(nvinfer1::TilingOptimizationLevel level) noexcept override {
    g_record->tiling_level = static_cast<int32_t>(level);
    return true;
  }
  void setMemoryPoolLimit(nvinfer1::MemoryPoolType pool, std::size_t size) noexcept override {
    if (pool == nvinfer1::MemoryPoolType::kWORKSPACE) g_record->workspace = size;
    g_record->pools[static_cast<int32_t>(pool)] = size;
  }
  void setBuilderOptimizationLevel(int32_t level) noexcept override { g_record->optimization_level = level; }
  void setMaxAuxStreams(int32_t n) noexcept override { g_record->aux_streams = n; }
  void setProgressMonitor(nvinfer1::IProgressMonitor* monitor) noexcept override {
    monitor_ = monitor;
    if (monitor == nullptr && g_record->builds > 0) g_record->monitor_detached_after_build = true;
  }
  nvinfer1::ITimingCache* createTimingCache(void const* blob, std::size_t size) const noexcept override {
    const std::string text(static_cast<const char*>(blob), blob == nullptr ? 0 : size);
    g_record->cache_blob_in = text;
    if (text.empty()) return new FakeTimingCache("fake-gpu", {});
    std::string device;
    std::set<std::string> keys;
    if (!ParseCacheBlob(text, &device, &keys)) return nullptr;
    return new FakeTimingCache(device, keys);
  }
  bool setTimingCache(nvinfer1::ITimingCache const& cache, bool ignoreMismatch) noexcept override {
    auto* fake = const_cast<FakeTimingCache*>(static_cast<const FakeTimingCache*>(&cache));
    g_record->cache_ignore_mismatch = ignoreMismatch;
    if (fake->device() != "fake-gpu" && !ignoreMismatch) return false;
    g_record->cache_set = true;
    cache_ = fake;
    return true;
  }
  nvinfer1::ITimingCache const* getTimingCache() const noexcept override { return cache_; }
  int32_t addOptimizationProfile(nvinfer1::IOptimizationProfile const*) noexcept override {
    return g_record->profiles_added++;
  }

  nvinfer1::IProgressMonitor* monitor_ = nullptr;
  FakeTimingCache* cache_ = nullptr;
};

class FakeBuilder final : public nvinfer1::IBuilder {
 public:
  explicit FakeBuilder(nvinfer1::ILogger& logger) : logger_(logger) {}
  bool setMaxThreads(int32_t n) noexcept override {
    g_record->max_threads = n;
    return true;
  }
  nvinfer1::IPluginRegistry& getPluginRegistry() noexcept override { return registry_; }
  nvinfer1::INetworkDefinition* createNetworkV2(nvinfer1::NetworkDefinitionCreationFlags flags) noexcept override {
    g_record->network_flags = flags;
    return new FakeNetwork;
  }
  nvinfer1::IBuilderConfig* createBuilderConfig() noexcept override {
    config_ = new FakeConfig;
    return config_;
  }
  nvinfer1::IOptimizationProfile* createOptimizationProfile() noexcept override {
    profiles_.push_back(std::make_unique<FakeProfile>());
    return profiles_.back().get();
  }
  nvinfer1::IHostMemory* buildSerializedNetwork(nvinfer1::INetworkDefinition&,
                                                nvinfer1::IBuilderConfig& config) noexcept override;

 private:
  // loadLibrary records the path and succeeds for files that exist.
  class Registry final : public nvinfer1::IPluginRegistry {
   public:
    PluginLibraryHandle loadLibrary(nvinfer1::AsciiChar const* path) noexcept override {
      g_record->dynamic_plugins.emplace_back(path);
      std::FILE* f = std::fopen(path, "rb");
      if (f == nullptr) return nullptr;
      std::fclose(f);
      return this;
    }
  } registry_;
  nvinfer1::ILogger& logger_;
  FakeConfig* config_ = nullptr;
  std::vector<std::unique_ptr<FakeProfile>> profiles_;  // the builder owns its profiles
};

void NoteThread() {
  std::lock_guard<std::mutex> lock(g_record->threads_mu);
  g_record->callback_threads.insert(std::this_thread::get_id());
}

nvinfer1::IHostMemory* FakeBuilder::buildSerializedNetwork(nvinfer1::INetworkDefinition&,
                                                           nvinfer1::IBuilderConfig& config_base) noexcept {
  auto& config = static_cast<FakeConfig&>(config_base);
  const Script& script = *g_script;
  ++g_record->builds;
  nvinfer1::IProgressMonitor* monitor = config.monitor_;
  g_record->monitor_attached_during_build = monitor != nullptr;
  logger_.log(nvinfer1::ILogger::Severity::kINFO, "fake: building an engine");
  logger_.log(nvinfer1::ILogger::Severity::kVERBOSE, "fake: verbose detail");

  bool error_on_miss = false;
  for (nvinfer1::BuilderFlag flag : g_record->flags) {
    error_on_miss = error_on_miss || flag == nvinfer1::BuilderFlag::kERROR_ON_TIMING_CACHE_MISS;
  }
  if (error_on_miss && (config.cache_ == nullptr || config.cache_->entries() == 0)) {
    logger_.log(nvinfer1::ILogger::Severity::kERROR, "fake: timing cache miss with kERROR_ON_TIMING_CACHE_MISS");
    return nullptr;
  }

  // Set by whichever thread first gets false; every thread stops at its next step.
  std::atomic<bool> stop{false};
  const char* root = "Building engine";
  if (monitor != nullptr) monitor->phaseStart(root, nullptr, script.root_steps);
  for (int s = 0; s < script.root_steps && !stop.load(); ++s) {
    std::vector<std::thread> threads;
    for (int w = 0; w < script.workers; ++w) {
      threads.emplace_back([&, w, s] {
        if (monitor == nullptr) return;
        NoteThread();
        const std::string name = "Timing tactics " + std::to_string(w);
        monitor->phaseStart(name.c_str(), root, script.worker_steps);
        for (int k = 0; k < script.worker_steps && !stop.load(); ++k) {
          if (script.step_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(script.step_ms));
          const bool go_on = monitor->stepComplete(name.c_str(), k);
          g_record->steps_reported.fetch_add(1);
          if (w == 0 && s == 0 && k == script.hook_step && script.hook) script.hook();
          if (!go_on) {
            g_record->false_returns.fetch_add(1);
            stop.store(true);
          }
        }
        monitor->phaseFinish(name.c_str());
      });
    }
    for (std::thread& t : threads) t.join();
    if (stop.load()) break;
    if (monitor != nullptr && !monitor->stepComplete(root, s)) {
      g_record->false_returns.fetch_add(1);
      stop.store(true);
    }
  }
  if (monitor != nullptr) monitor->phaseFinish(root);
  if (config.cache_ != nullptr) config.cache_->Learn(script.workers);  // timings measured so far
  if (stop.load()) return nullptr;
  if (script.build_fails) {
    logger_.log(nvinfer1::ILogger::Severity::kERROR, "fake: out of device memory while timing tactics");
    return nullptr;
  }
  if (script.before_return) script.before_return();
  g_record->returned_engine = true;
  return new FakeHostMemory(script.engine);
}

// Processes that load the double as their TensorRT (the end-to-end tests) script it
// through the environment: FAKE_TENSORRT_INPUTS="x:-1x3x224x224,s:" (-1 dynamic, no
// dimensions a scalar), FAKE_TENSORRT_LIB_VERSION, FAKE_TENSORRT_STEP_MS (a pause per
// step, so that concurrent builds overlap), FAKE_TENSORRT_ENGINE_BYTES (the engine's size).
std::unique_ptr<Script> NewScript() {
  auto script = std::make_unique<Script>();
  if (const char* inputs = std::getenv("FAKE_TENSORRT_INPUTS")) {
    script->inputs.clear();
    std::string text = inputs;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t comma = text.find(',', pos);
      if (comma == std::string::npos) comma = text.size();
      const std::string item = text.substr(pos, comma - pos);
      const size_t colon = item.find(':');
      FakeInput input{item.substr(0, colon), {}};
      if (!input.name.empty() && input.name.back() == '#') {  // "shape#:2": a shape tensor
        input.name.pop_back();
        input.shape_tensor = true;
      }
      std::string dims = colon == std::string::npos ? "" : item.substr(colon + 1);
      size_t d = 0;
      while (d < dims.size()) {
        size_t x = dims.find('x', d);
        if (x == std::string::npos) x = dims.size();
        input.dims.push_back(std::atoll(dims.substr(d, x - d).c_str()));
        d = x + 1;
      }
      script->inputs.push_back(input);
      pos = comma + 1;
    }
  }
  if (const char* version = std::getenv("FAKE_TENSORRT_LIB_VERSION")) script->lib_version = std::atoi(version);
  if (const char* ms = std::getenv("FAKE_TENSORRT_STEP_MS")) script->step_ms = std::atoi(ms);
  if (const char* key = std::getenv("FAKE_TENSORRT_CACHE_KEY")) script->cache_key = key;
  if (const char* bytes = std::getenv("FAKE_TENSORRT_ENGINE_BYTES")) {  // a large engine, bytes that vary
    script->engine.resize(static_cast<size_t>(std::strtoull(bytes, nullptr, 10)));
    for (size_t i = 0; i < script->engine.size(); ++i) script->engine[i] = static_cast<char>((i * 131 + i / 4099) & 0xff);
  }
  return script;
}

}  // namespace

void PopulateNetwork(nvinfer1::INetworkDefinition& network) { static_cast<FakeNetwork&>(network).Populate(); }

Script& GetScript() { return *g_script; }
Record& GetRecord() { return *g_record; }
void Reset() {
  g_script = NewScript();
  g_record = std::make_unique<Record>();
}

std::string CacheBlob(const std::string& device, const std::set<std::string>& keys) {
  std::string text = "FAKECACHE;device=" + device + ";entries=" + std::to_string(keys.size()) + ";keys=";
  for (const std::string& key : keys) text += key + "|";
  return text;
}

bool ParseCacheBlob(const std::string& blob, std::string* device, std::set<std::string>* keys) {
  const std::string head = "FAKECACHE;device=";
  if (blob.compare(0, head.size(), head) != 0) return false;
  const size_t semi = blob.find(';', head.size());
  const size_t at = blob.find(";keys=", head.size());
  if (semi == std::string::npos || at == std::string::npos) return false;
  *device = blob.substr(head.size(), semi - head.size());
  size_t pos = at + 6;
  while (pos < blob.size()) {
    const size_t bar = blob.find('|', pos);
    if (bar == std::string::npos) return false;
    keys->insert(blob.substr(pos, bar - pos));
    pos = bar + 1;
  }
  return true;
}

std::string MakeCacheBlob(const std::string& device, int entries) {
  std::set<std::string> keys;
  for (int i = 0; i < entries; ++i) keys.insert("t" + std::to_string(i));
  return CacheBlob(device, keys);
}

}  // namespace fake_trt

extern "C" void* createInferBuilder_INTERNAL(void* logger_ptr, int32_t version) noexcept {
  auto& logger = *static_cast<nvinfer1::ILogger*>(logger_ptr);
  fake_trt::GetRecord().builder_version_arg = version;
  ++fake_trt::GetRecord().builders_created;
  if (fake_trt::GetScript().builder_fails) {
    logger.log(nvinfer1::ILogger::Severity::kERROR, "fake: CUDA initialization failure with error: 35");
    return nullptr;
  }
  return static_cast<nvinfer1::IBuilder*>(new fake_trt::FakeBuilder(logger));
}

extern "C" int32_t getInferLibVersion() noexcept { return fake_trt::GetScript().lib_version; }
