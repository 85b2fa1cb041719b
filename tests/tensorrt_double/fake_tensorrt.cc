// Fake TensorRT builder and ONNX parser behind the TEST DOUBLE headers. Not NVIDIA
// code: a stand-in that behaves as TensorRT's documentation says, for CI.
#include "fake_tensorrt.h"

#include <NvOnnxParser.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace fake_trt {

namespace {

std::unique_ptr<Script> g_script = std::make_unique<Script>();
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
};

class FakeTimingCache final : public nvinfer1::ITimingCache {
 public:
  FakeTimingCache(std::string device, int entries) : device_(std::move(device)), entries_(entries) {}
  nvinfer1::IHostMemory* serialize() const noexcept override {
    return new FakeHostMemory(MakeCacheBlob(device_, entries_));
  }
  const std::string& device() const { return device_; }
  int entries() const { return entries_; }
  void Learn(int n) { entries_ += n; }

 private:
  std::string device_;
  int entries_;
};

class FakeConfig final : public nvinfer1::IBuilderConfig {
 public:
  void setFlag(nvinfer1::BuilderFlag flag) noexcept override { g_record->flags.push_back(flag); }
  void setMemoryPoolLimit(nvinfer1::MemoryPoolType, std::size_t size) noexcept override {
    g_record->workspace = size;
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
    if (text.empty()) return new FakeTimingCache("fake-gpu", 0);
    char device[64] = {};
    int entries = 0;
    if (std::sscanf(text.c_str(), "FAKECACHE;device=%63[^;];entries=%d", device, &entries) != 2) return nullptr;
    return new FakeTimingCache(device, entries);
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
          if (script.step_time.count() > 0) std::this_thread::sleep_for(script.step_time);
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

class FakeParserError final : public nvonnxparser::IParserError {
 public:
  explicit FakeParserError(std::string text) : text_(std::move(text)) {}
  ~FakeParserError() override = default;
  char const* desc() const override { return text_.c_str(); }

 private:
  std::string text_;
};

class FakeParser final : public nvonnxparser::IParser {
 public:
  FakeParser(FakeNetwork& network, nvinfer1::ILogger& logger) : network_(network), logger_(logger) {}
  bool parseFromFile(char const* file, int verbosity) noexcept override {
    g_record->parsed_file = file;
    g_record->parse_verbosity = verbosity;
    if (std::FILE* f = std::fopen(file, "rb")) {
      std::fclose(f);
    } else {
      errors_.emplace_back(std::string("failed to open file ") + file);
      return false;
    }
    if (g_script->parse_fails) {
      logger_.log(nvinfer1::ILogger::Severity::kERROR, "fake parser: node 3 (FancyOp) is not supported");
      errors_.emplace_back("In node 3 with name: /fancy and operator: FancyOp (parseNode): UNSUPPORTED_NODE");
      return false;
    }
    network_.Populate();
    return true;
  }
  int getNbErrors() const noexcept override { return static_cast<int>(errors_.size()); }
  nvonnxparser::IParserError const* getError(int index) const noexcept override {
    return index >= 0 && index < getNbErrors() ? &errors_[static_cast<size_t>(index)] : nullptr;
  }

 private:
  FakeNetwork& network_;
  nvinfer1::ILogger& logger_;
  std::vector<FakeParserError> errors_;
};

}  // namespace

std::chrono::milliseconds StepTimeFromEnvironment() {
  const char* text = std::getenv("FAKE_TENSORRT_STEP_MS");
  return std::chrono::milliseconds(text != nullptr ? std::atoi(text) : 0);
}

Script& GetScript() { return *g_script; }
Record& GetRecord() { return *g_record; }
void Reset() {
  g_script = std::make_unique<Script>();
  g_record = std::make_unique<Record>();
}

std::string MakeCacheBlob(const std::string& device, int entries) {
  return "FAKECACHE;device=" + device + ";entries=" + std::to_string(entries);
}

}  // namespace fake_trt

namespace nvinfer1 {
IBuilder* createInferBuilder(ILogger& logger) noexcept {
  if (fake_trt::GetScript().builder_fails) {
    logger.log(ILogger::Severity::kERROR, "fake: CUDA initialization failure with error: 35");
    return nullptr;
  }
  return new fake_trt::FakeBuilder(logger);
}
}  // namespace nvinfer1

namespace nvonnxparser {
IParser* createParser(nvinfer1::INetworkDefinition& network, nvinfer1::ILogger& logger) noexcept {
  return new fake_trt::FakeParser(static_cast<fake_trt::FakeNetwork&>(network), logger);
}
}  // namespace nvonnxparser

extern "C" int32_t getInferLibVersion() noexcept { return fake_trt::GetScript().lib_version; }
