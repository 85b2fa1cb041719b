// trtwatch's OWN declarations of the part of TensorRT's C++ ABI that the attach library
// (and the ABI test double, tests/tensorrt_abi_double) touch. Written by the project
// from the layout TensorRT's documented headers describe (NvInfer.h, NvInferImpl.h,
// NvInferRuntime*.h of 10.16 and 11.1); no text of them. Compiled once per major
// version: TRTWATCH_ATTACH_MAJOR is 10 or 11.
//
// What matters here is the layout, never the names: each public class is a vptr and
// an `apiv::V*` implementation pointer, its inline methods forward to the
// implementation, and an implementation class's virtual functions sit in TensorRT's
// order (counted with the two slots of VRoot's virtual destructor). Only the classes
// and the slots trtwatch needs are declared; an implementation class is declared up
// to its last slot that trtwatch calls or fills, with every slot before it in place.
// Within a major version releases only append slots (docs/attach.md).
#pragma once

#include <cstddef>
#include <cstdint>

#ifndef TRTWATCH_ATTACH_MAJOR
#error "compile with TRTWATCH_ATTACH_MAJOR=10 or 11"
#endif

namespace nvinfer1 {

// Types whose layout trtwatch never needs: opaque.
class IGpuAllocator;
class IErrorRecorder;
class IOptimizationProfile;
class IPluginRegistry;
class ICudaEngine;
class IStreamWriter;
class ILayer;
class ITimingCache;
class IInt8Calibrator;
class IAlgorithmSelector;
class INetworkDefinition;
class IBuilderConfig;
class IHostMemory;
class IRuntime;
class IRefitter;
using cudaStream_t = struct CUstream_st*;
// Enumerations are 32-bit (`enum class ... : int32_t`), flag sets 32-bit unsigned.
using EngineCapability = int32_t;
using BuilderFlags = uint32_t;
using BuilderFlag = int32_t;
using DeviceType = int32_t;
using ProfilingVerbosity = int32_t;
using QuantizationFlags = uint32_t;
using QuantizationFlag = int32_t;
using TacticSources = uint32_t;
using MemoryPoolType = int32_t;
using PreviewFeature = int32_t;
using HardwareCompatibilityLevel = int32_t;
using RuntimePlatform = int32_t;
using TilingOptimizationLevel = int32_t;
using NetworkDefinitionCreationFlags = uint32_t;
using DataType = int32_t;

struct InterfaceInfo {
  char const* kind;
  int32_t major;
  int32_t minor;
};

// The base of TensorRT's versioned callback interfaces: two slots, then the destructor.
class IVersionedInterface {
 public:
  virtual int32_t getAPILanguage() const noexcept { return 0; }  // kCPP
  virtual InterfaceInfo getInterfaceInfo() const noexcept = 0;
  virtual ~IVersionedInterface() noexcept = default;
};

// The progress monitor: the same layout in 10.x and 11.x.
class IProgressMonitor : public IVersionedInterface {
 public:
  InterfaceInfo getInterfaceInfo() const noexcept override { return {"IProgressMonitor", 1, 0}; }
  virtual void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept = 0;
  virtual bool stepComplete(char const* phaseName, int32_t step) noexcept = 0;
  virtual void phaseFinish(char const* phaseName) noexcept = 0;
};

// The logger: a plain interface in 10.x (log in slot 0); versioned in 11.x (log after
// IVersionedInterface's slots). trtwatch never wraps it: the program's logger gets
// TensorRT's messages untouched.
enum class Severity : int32_t { kINTERNAL_ERROR = 0, kERROR = 1, kWARNING = 2, kINFO = 3, kVERBOSE = 4 };
#if TRTWATCH_ATTACH_MAJOR >= 11
class ILogger : public IVersionedInterface {
 public:
  InterfaceInfo getInterfaceInfo() const noexcept override { return {"ILogger", 1, 0}; }
  virtual void log(Severity severity, char const* msg) noexcept = 0;
};
#else
class ILogger {
 public:
  virtual void log(Severity severity, char const* msg) noexcept = 0;
  virtual ~ILogger() = default;
};
#endif

namespace apiv {

class VRoot {
 public:
  virtual ~VRoot() noexcept = default;
};

class VHostMemory : public VRoot {
 public:
  virtual void* data() const noexcept = 0;
  virtual std::size_t size() const noexcept = 0;
  virtual DataType type() const noexcept = 0;
};

// No slot of the network is called by trtwatch.
class VNetworkDefinition : public VRoot {};

class VBuilderConfig : public VRoot {
 public:
  virtual void setAvgTimingIterations(int32_t avgTiming) noexcept = 0;
  virtual int32_t getAvgTimingIterations() const noexcept = 0;
  virtual void setEngineCapability(EngineCapability capability) noexcept = 0;
  virtual EngineCapability getEngineCapability() const noexcept = 0;
#if TRTWATCH_ATTACH_MAJOR < 11
  virtual void setInt8Calibrator(IInt8Calibrator* calibrator) noexcept = 0;
  virtual IInt8Calibrator* getInt8Calibrator() const noexcept = 0;
#endif
  virtual void setFlags(BuilderFlags builderFlags) noexcept = 0;
  virtual BuilderFlags getFlags() const noexcept = 0;
  virtual void clearFlag(BuilderFlag builderFlag) noexcept = 0;
  virtual void setFlag(BuilderFlag builderFlag) noexcept = 0;
  virtual bool getFlag(BuilderFlag builderFlag) const noexcept = 0;
  virtual void setDeviceType(ILayer const* layer, DeviceType deviceType) noexcept = 0;
  virtual DeviceType getDeviceType(ILayer const* layer) const noexcept = 0;
  virtual bool isDeviceTypeSet(ILayer const* layer) const noexcept = 0;
  virtual void resetDeviceType(ILayer const* layer) noexcept = 0;
  virtual bool canRunOnDLA(ILayer const* layer) const noexcept = 0;
  virtual void setDLACore(int32_t dlaCore) noexcept = 0;
  virtual int32_t getDLACore() const noexcept = 0;
  virtual void setDefaultDeviceType(DeviceType deviceType) noexcept = 0;
  virtual DeviceType getDefaultDeviceType() const noexcept = 0;
  virtual void reset() noexcept = 0;
  virtual void setProfileStream(cudaStream_t stream) noexcept = 0;
  virtual cudaStream_t getProfileStream() const noexcept = 0;
  virtual int32_t addOptimizationProfile(IOptimizationProfile const* profile) noexcept = 0;
  virtual int32_t getNbOptimizationProfiles() const noexcept = 0;
  virtual void setProfilingVerbosity(ProfilingVerbosity verbosity) noexcept = 0;
  virtual ProfilingVerbosity getProfilingVerbosity() const noexcept = 0;
#if TRTWATCH_ATTACH_MAJOR < 11
  virtual void setAlgorithmSelector(IAlgorithmSelector* selector) noexcept = 0;
  virtual IAlgorithmSelector* getAlgorithmSelector() const noexcept = 0;
  virtual bool setCalibrationProfile(IOptimizationProfile const* profile) noexcept = 0;
  virtual IOptimizationProfile const* getCalibrationProfile() noexcept = 0;
  virtual void setQuantizationFlags(QuantizationFlags flags) noexcept = 0;
  virtual QuantizationFlags getQuantizationFlags() const noexcept = 0;
  virtual void clearQuantizationFlag(QuantizationFlag flag) noexcept = 0;
  virtual void setQuantizationFlag(QuantizationFlag flag) noexcept = 0;
  virtual bool getQuantizationFlag(QuantizationFlag flag) const noexcept = 0;
#endif
  virtual bool setTacticSources(TacticSources tacticSources) noexcept = 0;
  virtual TacticSources getTacticSources() const noexcept = 0;
  virtual ITimingCache* createTimingCache(void const* blob, std::size_t size) const noexcept = 0;
  virtual bool setTimingCache(ITimingCache const& cache, bool ignoreMismatch) noexcept = 0;
  virtual ITimingCache const* getTimingCache() const noexcept = 0;
  virtual void setMemoryPoolLimit(MemoryPoolType pool, std::size_t poolSize) noexcept = 0;
  virtual std::size_t getMemoryPoolLimit(MemoryPoolType pool) const noexcept = 0;
  virtual void setPreviewFeature(PreviewFeature feature, bool enable) noexcept = 0;
  virtual bool getPreviewFeature(PreviewFeature feature) const noexcept = 0;
  virtual void setBuilderOptimizationLevel(int32_t level) noexcept = 0;
  virtual int32_t getBuilderOptimizationLevel() const noexcept = 0;
  virtual void setHardwareCompatibilityLevel(HardwareCompatibilityLevel level) noexcept = 0;
  virtual HardwareCompatibilityLevel getHardwareCompatibilityLevel() const noexcept = 0;
  virtual void setPluginsToSerialize(char const* const* paths, int32_t nbPaths) noexcept = 0;
  virtual char const* getPluginToSerialize(int32_t index) const noexcept = 0;
  virtual int32_t getNbPluginsToSerialize() const noexcept = 0;
#if TRTWATCH_ATTACH_MAJOR >= 11
  virtual bool setMaxAuxStreams(int32_t nbStreams) noexcept = 0;
#else
  virtual void setMaxAuxStreams(int32_t nbStreams) noexcept = 0;
#endif
  virtual int32_t getMaxAuxStreams() const noexcept = 0;
  virtual void setProgressMonitor(IProgressMonitor* monitor) noexcept = 0;  // slot 56 (10.16), 45 (11.1)
  virtual IProgressMonitor* getProgressMonitor() const noexcept = 0;        // slot 57, 46
};

class VBuilder : public VRoot {
 public:
#if TRTWATCH_ATTACH_MAJOR < 11
  virtual bool platformHasFastFp16() const noexcept = 0;
  virtual bool platformHasFastInt8() const noexcept = 0;
#endif
  virtual int32_t getMaxDLABatchSize() const noexcept = 0;
  virtual int32_t getNbDLACores() const noexcept = 0;
  virtual void setGpuAllocator(IGpuAllocator* allocator) noexcept = 0;
  virtual IBuilderConfig* createBuilderConfig() noexcept = 0;  // slot 7 (10.16), 5 (11.1)
  virtual INetworkDefinition* createNetworkV2(NetworkDefinitionCreationFlags flags) noexcept = 0;
  virtual IOptimizationProfile* createOptimizationProfile() noexcept = 0;
  virtual void setErrorRecorder(IErrorRecorder* recorder) noexcept = 0;
  virtual IErrorRecorder* getErrorRecorder() const noexcept = 0;
  virtual void reset() noexcept = 0;
#if TRTWATCH_ATTACH_MAJOR < 11
  virtual bool platformHasTf32() const noexcept = 0;
#endif
  // slot 14 (10.16), 11 (11.1)
  virtual IHostMemory* buildSerializedNetwork(INetworkDefinition& network, IBuilderConfig& config) noexcept = 0;
  virtual bool isNetworkSupported(INetworkDefinition const& network, IBuilderConfig const& config) const noexcept = 0;
  virtual ILogger* getLogger() const noexcept = 0;
  virtual bool setMaxThreads(int32_t maxThreads) noexcept = 0;
  virtual int32_t getMaxThreads() const noexcept = 0;
  virtual IPluginRegistry& getPluginRegistry() noexcept = 0;
  // slot 20 (10.16), 17 (11.1); appended in 10.8
  virtual ICudaEngine* buildEngineWithConfig(INetworkDefinition& network, IBuilderConfig& config) noexcept = 0;
  // appended in 10.16
  virtual bool buildSerializedNetworkToStream(INetworkDefinition& network, IBuilderConfig& config,
                                              IStreamWriter& writer) noexcept = 0;
  virtual IHostMemory* buildSerializedNetworkWithKernelText(INetworkDefinition& network, IBuilderConfig& config,
                                                            IHostMemory*& kernelText) noexcept = 0;
};

}  // namespace apiv

// The first TensorRT version whose headers declare no more slots than these: a caller
// compiled with later headers may call a slot past them, and is not attached.
#if TRTWATCH_ATTACH_MAJOR >= 11
inline constexpr int32_t kDeclaredThroughVersion = 110100;  // 11.1
#else
inline constexpr int32_t kDeclaredThroughVersion = 101600;  // 10.16
#endif
// The number of slots declared above (destructor slots included).
#if TRTWATCH_ATTACH_MAJOR >= 11
inline constexpr int kBuilderSlots = 20;
inline constexpr int kConfigSlots = 47;
#else
inline constexpr int kBuilderSlots = 23;
inline constexpr int kConfigSlots = 58;
#endif

// The builder slots a library of `library_version` has: releases append, so an older
// one stops before the later entry points (10.8 appended buildEngineWithConfig, 10.16
// the stream and kernel-text builds).
constexpr int BuilderSlotsOf([[maybe_unused]] int32_t library_version) {
#if TRTWATCH_ATTACH_MAJOR >= 11
  return kBuilderSlots;  // 11.0 and 11.1 have them all
#else
  return library_version < 100800 ? 20 : library_version < 101600 ? 21 : kBuilderSlots;
#endif
}

// The public classes: a vptr (the no-copy base's virtual destructor) and the
// implementation pointer; every method forwards inline, as in TensorRT's headers.
class INoCopy {
 protected:
  INoCopy() = default;
  virtual ~INoCopy() = default;

 public:
  INoCopy(INoCopy const&) = delete;
  INoCopy& operator=(INoCopy const&) = delete;
};

class IHostMemory : public INoCopy {
 public:
  ~IHostMemory() noexcept override = default;
  void* data() const noexcept { return mImpl->data(); }
  std::size_t size() const noexcept { return mImpl->size(); }

 protected:
  apiv::VHostMemory* mImpl = nullptr;
};

class INetworkDefinition : public INoCopy {
 public:
  ~INetworkDefinition() noexcept override = default;

 protected:
  apiv::VNetworkDefinition* mImpl = nullptr;
};

class IBuilderConfig : public INoCopy {
 public:
  ~IBuilderConfig() noexcept override = default;
  void setProgressMonitor(IProgressMonitor* monitor) noexcept { mImpl->setProgressMonitor(monitor); }
  IProgressMonitor* getProgressMonitor() const noexcept { return mImpl->getProgressMonitor(); }

 protected:
  apiv::VBuilderConfig* mImpl = nullptr;
};

class IBuilder : public INoCopy {
 public:
  ~IBuilder() noexcept override = default;
  IBuilderConfig* createBuilderConfig() noexcept { return mImpl->createBuilderConfig(); }
  INetworkDefinition* createNetworkV2(NetworkDefinitionCreationFlags flags) noexcept {
    return mImpl->createNetworkV2(flags);
  }
  IHostMemory* buildSerializedNetwork(INetworkDefinition& network, IBuilderConfig& config) noexcept {
    return mImpl->buildSerializedNetwork(network, config);
  }
  ICudaEngine* buildEngineWithConfig(INetworkDefinition& network, IBuilderConfig& config) noexcept {
    return mImpl->buildEngineWithConfig(network, config);
  }

 protected:
  apiv::VBuilder* mImpl = nullptr;
};

}  // namespace nvinfer1

// The exported C entry points (13; getBuilderSafePluginRegistry is deprecated in both).
extern "C" {
void* createInferBuilder_INTERNAL(void* logger, int32_t version) noexcept;
void* createInferRuntime_INTERNAL(void* logger, int32_t version) noexcept;
void* createInferRefitter_INTERNAL(void* engine, void* logger, int32_t version) noexcept;
nvinfer1::IPluginRegistry* getBuilderPluginRegistry(nvinfer1::EngineCapability capability) noexcept;
bool setInternalLibraryPath(char const* path) noexcept;
void* getBuilderSafePluginRegistry(nvinfer1::EngineCapability capability) noexcept;
nvinfer1::IPluginRegistry* getPluginRegistry() noexcept;
nvinfer1::ILogger* getLogger() noexcept;
int32_t getInferLibVersion() noexcept;
int32_t getInferLibMajorVersion() noexcept;
int32_t getInferLibMinorVersion() noexcept;
int32_t getInferLibPatchVersion() noexcept;
int32_t getInferLibBuildVersion() noexcept;
}
