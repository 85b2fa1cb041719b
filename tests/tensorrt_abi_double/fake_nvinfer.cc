// TEST DOUBLE of TensorRT's libnvinfer.so.N, ABI-faithful (unlike tests/tensorrt_double,
// whose classes are plain virtual): public classes hold an `apiv` implementation
// pointer, implementation classes have TensorRT's virtual order, entry points are the
// exported C functions. Declarations: the project's own, src/attach/abi/nvinfer_abi.h.
// Built once per major version (10, 11) as fake_tensorrt_abi/N/libnvinfer.so.N.
//
// The builder simulates a build: a top phase, a parallel phase of a few worker
// threads with TRTWATCH_FAKE_STEPS steps each (TRTWATCH_FAKE_STEP_MS apart), and a
// serializing phase, reported to the config's progress monitor. A false from
// stepComplete ends the build: every open phase finishes and the call returns null.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "attach/abi/nvinfer_abi.h"

namespace nvinfer1 {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

class HostMemoryImpl : public apiv::VHostMemory {
 public:
  explicit HostMemoryImpl(std::string bytes) : bytes_(std::move(bytes)) {}
  void* data() const noexcept override { return const_cast<char*>(bytes_.data()); }
  std::size_t size() const noexcept override { return bytes_.size(); }
  DataType type() const noexcept override { return 5; }  // kUINT8

 private:
  std::string bytes_;
};

class HostMemory : public IHostMemory {
 public:
  explicit HostMemory(std::string bytes) : impl_(std::move(bytes)) { mImpl = &impl_; }

 private:
  HostMemoryImpl impl_;
};

class Network : public INetworkDefinition {
 public:
  Network() { mImpl = &impl_; }

 private:
  apiv::VNetworkDefinition impl_;
};

class BuilderConfigImpl : public apiv::VBuilderConfig {
 public:
  void setAvgTimingIterations(int32_t) noexcept override {}
  int32_t getAvgTimingIterations() const noexcept override { return 1; }
  void setEngineCapability(EngineCapability) noexcept override {}
  EngineCapability getEngineCapability() const noexcept override { return 0; }
#if TRTWATCH_ATTACH_MAJOR < 11
  void setInt8Calibrator(IInt8Calibrator*) noexcept override {}
  IInt8Calibrator* getInt8Calibrator() const noexcept override { return nullptr; }
#endif
  void setFlags(BuilderFlags) noexcept override {}
  BuilderFlags getFlags() const noexcept override { return 0; }
  void clearFlag(BuilderFlag) noexcept override {}
  void setFlag(BuilderFlag) noexcept override {}
  bool getFlag(BuilderFlag) const noexcept override { return false; }
  void setDeviceType(ILayer const*, DeviceType) noexcept override {}
  DeviceType getDeviceType(ILayer const*) const noexcept override { return 0; }
  bool isDeviceTypeSet(ILayer const*) const noexcept override { return false; }
  void resetDeviceType(ILayer const*) noexcept override {}
  bool canRunOnDLA(ILayer const*) const noexcept override { return false; }
  void setDLACore(int32_t) noexcept override {}
  int32_t getDLACore() const noexcept override { return -1; }
  void setDefaultDeviceType(DeviceType) noexcept override {}
  DeviceType getDefaultDeviceType() const noexcept override { return 0; }
  void reset() noexcept override { monitor_ = nullptr; }
  void setProfileStream(cudaStream_t) noexcept override {}
  cudaStream_t getProfileStream() const noexcept override { return nullptr; }
  int32_t addOptimizationProfile(IOptimizationProfile const*) noexcept override { return 0; }
  int32_t getNbOptimizationProfiles() const noexcept override { return 0; }
  void setProfilingVerbosity(ProfilingVerbosity) noexcept override {}
  ProfilingVerbosity getProfilingVerbosity() const noexcept override { return 0; }
#if TRTWATCH_ATTACH_MAJOR < 11
  void setAlgorithmSelector(IAlgorithmSelector*) noexcept override {}
  IAlgorithmSelector* getAlgorithmSelector() const noexcept override { return nullptr; }
  bool setCalibrationProfile(IOptimizationProfile const*) noexcept override { return false; }
  IOptimizationProfile const* getCalibrationProfile() noexcept override { return nullptr; }
  void setQuantizationFlags(QuantizationFlags) noexcept override {}
  QuantizationFlags getQuantizationFlags() const noexcept override { return 0; }
  void clearQuantizationFlag(QuantizationFlag) noexcept override {}
  void setQuantizationFlag(QuantizationFlag) noexcept override {}
  bool getQuantizationFlag(QuantizationFlag) const noexcept override { return false; }
#endif
  bool setTacticSources(TacticSources) noexcept override { return true; }
  TacticSources getTacticSources() const noexcept override { return 0; }
  ITimingCache* createTimingCache(void const*, std::size_t) const noexcept override { return nullptr; }
  bool setTimingCache(ITimingCache const&, bool) noexcept override { return false; }
  ITimingCache const* getTimingCache() const noexcept override { return nullptr; }
  void setMemoryPoolLimit(MemoryPoolType, std::size_t) noexcept override {}
  std::size_t getMemoryPoolLimit(MemoryPoolType) const noexcept override { return 0; }
  void setPreviewFeature(PreviewFeature, bool) noexcept override {}
  bool getPreviewFeature(PreviewFeature) const noexcept override { return false; }
  void setBuilderOptimizationLevel(int32_t) noexcept override {}
  int32_t getBuilderOptimizationLevel() const noexcept override { return 3; }
  void setHardwareCompatibilityLevel(HardwareCompatibilityLevel) noexcept override {}
  HardwareCompatibilityLevel getHardwareCompatibilityLevel() const noexcept override { return 0; }
  void setPluginsToSerialize(char const* const*, int32_t) noexcept override {}
  char const* getPluginToSerialize(int32_t) const noexcept override { return nullptr; }
  int32_t getNbPluginsToSerialize() const noexcept override { return 0; }
#if TRTWATCH_ATTACH_MAJOR >= 11
  bool setMaxAuxStreams(int32_t) noexcept override { return true; }
#else
  void setMaxAuxStreams(int32_t) noexcept override {}
#endif
  int32_t getMaxAuxStreams() const noexcept override { return 0; }
  void setProgressMonitor(IProgressMonitor* monitor) noexcept override { monitor_ = monitor; }
  IProgressMonitor* getProgressMonitor() const noexcept override { return monitor_; }

 private:
  IProgressMonitor* monitor_ = nullptr;
};

class BuilderConfig : public IBuilderConfig {
 public:
  BuilderConfig() { mImpl = &impl_; }

 private:
  BuilderConfigImpl impl_;
};

// One simulated build: reports to `monitor` (may be null) and says whether it ran to
// the end. A refused step ends every phase at once.
class SimulatedBuild {
 public:
  explicit SimulatedBuild(IProgressMonitor* monitor)
      : monitor_(monitor), steps_(EnvInt("TRTWATCH_FAKE_STEPS", 20)), step_ms_(EnvInt("TRTWATCH_FAKE_STEP_MS", 5)) {}

  bool Run() {
    Start("Building engine", nullptr, 2);
    if (Step("Building engine", 0)) RunWorkers();
    if (!stopped_ && Step("Building engine", 1)) RunSerializer();
    Finish("Building engine");
    return !stopped_;
  }

 private:
  void RunWorkers() {
    constexpr int kWorkers = 3;
    Start("Tactic selection", "Building engine", kWorkers);
    std::vector<std::thread> threads;
    for (int w = 0; w < kWorkers; ++w) threads.emplace_back([this, w] { RunWorker(w); });
    for (auto& t : threads) t.join();
    Finish("Tactic selection");
  }
  void RunWorker(int worker) {
    const std::string name = "Timing worker " + std::to_string(worker);
    Start(name.c_str(), "Tactic selection", steps_);
    for (int s = 0; s < steps_ && !stopped_; ++s) {
      std::this_thread::sleep_for(std::chrono::milliseconds(step_ms_));
      Step(name.c_str(), s);
    }
    Finish(name.c_str());
  }
  void RunSerializer() {
    Start("Serializing", "Building engine", 2);
    for (int s = 0; s < 2 && Step("Serializing", s); ++s) {}
    Finish("Serializing");
  }
  void Start(const char* name, const char* parent, int steps) {
    if (monitor_ != nullptr) monitor_->phaseStart(name, parent, steps);
  }
  bool Step(const char* name, int step) {
    if (monitor_ != nullptr && !monitor_->stepComplete(name, step)) stopped_ = true;
    return !stopped_;
  }
  void Finish(const char* name) {
    if (monitor_ != nullptr) monitor_->phaseFinish(name);
  }

  IProgressMonitor* const monitor_;
  const int steps_;
  const int step_ms_;
  std::atomic<bool> stopped_{false};  // set by any worker, read by all
};

class BuilderImpl : public apiv::VBuilder {
 public:
  explicit BuilderImpl(ILogger* logger) : logger_(logger) {}
#if TRTWATCH_ATTACH_MAJOR < 11
  bool platformHasFastFp16() const noexcept override { return true; }
  bool platformHasFastInt8() const noexcept override { return true; }
#endif
  int32_t getMaxDLABatchSize() const noexcept override { return 0; }
  int32_t getNbDLACores() const noexcept override { return 0; }
  void setGpuAllocator(IGpuAllocator*) noexcept override {}
  IBuilderConfig* createBuilderConfig() noexcept override { return new BuilderConfig(); }
  INetworkDefinition* createNetworkV2(NetworkDefinitionCreationFlags) noexcept override { return new Network(); }
  IOptimizationProfile* createOptimizationProfile() noexcept override { return nullptr; }
  void setErrorRecorder(IErrorRecorder*) noexcept override {}
  IErrorRecorder* getErrorRecorder() const noexcept override { return nullptr; }
  void reset() noexcept override {}
#if TRTWATCH_ATTACH_MAJOR < 11
  bool platformHasTf32() const noexcept override { return true; }
#endif
  IHostMemory* buildSerializedNetwork(INetworkDefinition&, IBuilderConfig& config) noexcept override {
    return Build(config) ? new HostMemory("trtwatch fake engine") : nullptr;
  }
  bool isNetworkSupported(INetworkDefinition const&, IBuilderConfig const&) const noexcept override { return true; }
  ILogger* getLogger() const noexcept override { return logger_; }
  bool setMaxThreads(int32_t) noexcept override { return true; }
  int32_t getMaxThreads() const noexcept override { return 1; }
  IPluginRegistry& getPluginRegistry() noexcept override { return *reinterpret_cast<IPluginRegistry*>(this); }
  ICudaEngine* buildEngineWithConfig(INetworkDefinition&, IBuilderConfig& config) noexcept override {
    // No engine class in the double: a non-null marker the test programs only compare.
    return Build(config) ? reinterpret_cast<ICudaEngine*>(this) : nullptr;
  }
  bool buildSerializedNetworkToStream(INetworkDefinition&, IBuilderConfig& config, IStreamWriter&) noexcept override {
    return Build(config);
  }
  IHostMemory* buildSerializedNetworkWithKernelText(INetworkDefinition& network, IBuilderConfig& config,
                                                    IHostMemory*& kernelText) noexcept override {
    kernelText = nullptr;
    return buildSerializedNetwork(network, config);
  }

 private:
  bool Build(IBuilderConfig& config) {
    if (logger_ != nullptr) logger_->log(Severity::kINFO, "fake TensorRT: building an engine");
    const bool built = SimulatedBuild(config.getProgressMonitor()).Run();
    if (!built && logger_ != nullptr) logger_->log(Severity::kERROR, "fake TensorRT: the build was cancelled");
    return built;
  }
  ILogger* const logger_;
};

class Builder : public IBuilder {
 public:
  explicit Builder(ILogger* logger) : impl_(logger) { mImpl = &impl_; }

 private:
  BuilderImpl impl_;
};

}  // namespace
}  // namespace nvinfer1

#define FAKE_EXPORT __attribute__((visibility("default")))

extern "C" {
FAKE_EXPORT void* createInferBuilder_INTERNAL(void* logger, int32_t) noexcept {
  return static_cast<nvinfer1::IBuilder*>(new nvinfer1::Builder(static_cast<nvinfer1::ILogger*>(logger)));
}
FAKE_EXPORT void* createInferRuntime_INTERNAL(void*, int32_t) noexcept { return nullptr; }
FAKE_EXPORT void* createInferRefitter_INTERNAL(void*, void*, int32_t) noexcept { return nullptr; }
FAKE_EXPORT nvinfer1::IPluginRegistry* getBuilderPluginRegistry(nvinfer1::EngineCapability) noexcept { return nullptr; }
FAKE_EXPORT bool setInternalLibraryPath(char const*) noexcept { return true; }
FAKE_EXPORT void* getBuilderSafePluginRegistry(nvinfer1::EngineCapability) noexcept { return nullptr; }
FAKE_EXPORT nvinfer1::IPluginRegistry* getPluginRegistry() noexcept { return nullptr; }
FAKE_EXPORT nvinfer1::ILogger* getLogger() noexcept { return nullptr; }
FAKE_EXPORT int32_t getInferLibVersion() noexcept { return nvinfer1::kDeclaredThroughVersion; }
FAKE_EXPORT int32_t getInferLibMajorVersion() noexcept { return TRTWATCH_ATTACH_MAJOR; }
FAKE_EXPORT int32_t getInferLibMinorVersion() noexcept { return TRTWATCH_ATTACH_MAJOR == 10 ? 16 : 1; }
FAKE_EXPORT int32_t getInferLibPatchVersion() noexcept { return 0; }
// The double's mark: a test tells through it that the attach library forwarded here.
FAKE_EXPORT int32_t getInferLibBuildVersion() noexcept { return 4242; }
}
