// TEST DOUBLE, written from TensorRT's documented signatures: not NVIDIA's header.
//
// The few builder declarations trtwatch's backend uses, with TensorRT 10.x's names
// and signatures. Real TensorRT wraps an implementation pointer behind non-virtual
// methods; here the methods are pure virtual so that tests/tensorrt_double/
// fake_tensorrt.cc can implement them. Calling code is the same either way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "NvInferRuntimeBase.h"

namespace nvinfer1 {

enum class BuilderFlag : int32_t {
  kFP16 = 0,
  kINT8 = 1,
  kGPU_FALLBACK = 3,
  kREFIT = 4,
  kDISABLE_TIMING_CACHE = 5,
  kTF32 = 6,
  kSPARSE_WEIGHTS = 7,
  kDIRECT_IO = 11,
  kVERSION_COMPATIBLE = 13,
  kEXCLUDE_LEAN_RUNTIME = 14,
  kFP8 = 15,
  kERROR_ON_TIMING_CACHE_MISS = 16,
  kBF16 = 17,
  kDISABLE_COMPILATION_CACHE = 18,
  kSTRIP_PLAN = 19,
  kREFIT_IDENTICAL = 21,
  kWEIGHT_STREAMING = 22,
  kINT4 = 23,
};

enum class MemoryPoolType : int32_t {
  kWORKSPACE = 0,
  kDLA_MANAGED_SRAM = 1,
  kDLA_LOCAL_DRAM = 2,
  kDLA_GLOBAL_DRAM = 3,
  kTACTIC_DRAM = 4,
  kTACTIC_SHARED_MEMORY = 5,
};

enum class TacticSource : int32_t {
#if NV_TENSORRT_MAJOR < 11
  kCUBLAS = 0,
  kCUBLAS_LT = 1,
  kCUDNN = 2,
#endif
  kEDGE_MASK_CONVOLUTIONS = 3,
  kJIT_CONVOLUTIONS = 4,
};
using TacticSources = uint32_t;

enum class HardwareCompatibilityLevel : int32_t { kNONE = 0, kAMPERE_PLUS = 1, kSAME_COMPUTE_CAPABILITY = 2 };
enum class ProfilingVerbosity : int32_t { kLAYER_NAMES_ONLY = 0, kNONE = 1, kDETAILED = 2 };
enum class DeviceType : int32_t { kGPU = 0, kDLA = 1 };
enum class TilingOptimizationLevel : int32_t { kNONE = 0, kFAST = 1, kMODERATE = 2, kFULL = 3 };

class IPluginRegistry {
 public:
  using PluginLibraryHandle = void*;
  virtual PluginLibraryHandle loadLibrary(AsciiChar const* pluginPath) noexcept = 0;

 protected:
  virtual ~IPluginRegistry() noexcept = default;
};

enum class NetworkDefinitionCreationFlag : int32_t { kEXPLICIT_BATCH = 0, kSTRONGLY_TYPED = 1 };
using NetworkDefinitionCreationFlags = uint32_t;

enum class OptProfileSelector : int32_t { kMIN = 0, kOPT = 1, kMAX = 2 };

class IHostMemory {
 public:
  virtual ~IHostMemory() noexcept = default;
  virtual void* data() const noexcept = 0;
  virtual std::size_t size() const noexcept = 0;
};

class ITensor {
 public:
  virtual char const* getName() const noexcept = 0;
  virtual Dims getDimensions() const noexcept = 0;
  virtual bool isShapeTensor() const noexcept = 0;

 protected:
  virtual ~ITensor() noexcept = default;
};

class INetworkDefinition {
 public:
  virtual ~INetworkDefinition() noexcept = default;
  virtual int32_t getNbInputs() const noexcept = 0;
  virtual ITensor* getInput(int32_t index) const noexcept = 0;
};

class IOptimizationProfile {
 public:
  virtual bool setDimensions(char const* inputName, OptProfileSelector select, Dims const& dims) noexcept = 0;
#if NV_TENSORRT_MAJOR < 11
  virtual bool setShapeValues(char const* inputName, OptProfileSelector select, int32_t const* values,
                              int32_t nbValues) noexcept = 0;
#else
  virtual bool setShapeValuesV2(char const* inputName, OptProfileSelector select, int64_t const* values,
                                int32_t nbValues) noexcept = 0;
#endif

 protected:
  virtual ~IOptimizationProfile() noexcept = default;
};

class ITimingCache {
 public:
  virtual ~ITimingCache() noexcept = default;
  virtual IHostMemory* serialize() const noexcept = 0;
  virtual bool combine(ITimingCache const& inputCache, bool ignoreMismatch) noexcept = 0;
};

#if NV_TENSORRT_MAJOR >= 10
// 10.x/11.x: a versioned interface that implements getInterfaceInfo itself.
namespace v_1_0 {
class IProgressMonitor : public IVersionedInterface {
 public:
  IProgressMonitor() = default;
  virtual ~IProgressMonitor() noexcept = default;
  InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"IProgressMonitor", 1, 0}; }
  virtual void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept = 0;
  virtual bool stepComplete(char const* phaseName, int32_t step) noexcept = 0;
  virtual void phaseFinish(char const* phaseName) noexcept = 0;
};
}  // namespace v_1_0
using IProgressMonitor = v_1_0::IProgressMonitor;
#else
// 9.x: a plain abstract class.
class IProgressMonitor {
 public:
  IProgressMonitor() = default;
  virtual ~IProgressMonitor() noexcept = default;
  virtual void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept = 0;
  virtual bool stepComplete(char const* phaseName, int32_t step) noexcept = 0;
  virtual void phaseFinish(char const* phaseName) noexcept = 0;
};
#endif

class IBuilderConfig {
 public:
  virtual ~IBuilderConfig() noexcept = default;
  virtual void setFlag(BuilderFlag builderFlag) noexcept = 0;
  virtual void clearFlag(BuilderFlag builderFlag) noexcept = 0;
  virtual bool setTacticSources(TacticSources tacticSources) noexcept = 0;
  virtual TacticSources getTacticSources() const noexcept = 0;
  virtual void setHardwareCompatibilityLevel(HardwareCompatibilityLevel level) noexcept = 0;
  virtual void setProfilingVerbosity(ProfilingVerbosity verbosity) noexcept = 0;
  virtual void setDLACore(int32_t dlaCore) noexcept = 0;
  virtual void setDefaultDeviceType(DeviceType deviceType) noexcept = 0;
  virtual void setPluginsToSerialize(char const* const* paths, int32_t nbPaths) noexcept = 0;
  virtual void setMaxNbTactics(int32_t maxNbTactics) noexcept = 0;
  virtual bool setTilingOptimizationLevel(TilingOptimizationLevel level) noexcept = 0;
  virtual void setMemoryPoolLimit(MemoryPoolType pool, std::size_t poolSize) noexcept = 0;
  virtual void setBuilderOptimizationLevel(int32_t level) noexcept = 0;
  virtual void setMaxAuxStreams(int32_t nbStreams) noexcept = 0;
  virtual void setProgressMonitor(IProgressMonitor* monitor) noexcept = 0;
  virtual ITimingCache* createTimingCache(void const* blob, std::size_t size) const noexcept = 0;
  virtual bool setTimingCache(ITimingCache const& cache, bool ignoreMismatch) noexcept = 0;
  virtual ITimingCache const* getTimingCache() const noexcept = 0;
  virtual int32_t addOptimizationProfile(IOptimizationProfile const* profile) noexcept = 0;
};

class IBuilder {
 public:
  virtual ~IBuilder() noexcept = default;
  virtual bool setMaxThreads(int32_t maxThreads) noexcept = 0;
  virtual IPluginRegistry& getPluginRegistry() noexcept = 0;
  virtual INetworkDefinition* createNetworkV2(NetworkDefinitionCreationFlags flags) noexcept = 0;
  virtual IBuilderConfig* createBuilderConfig() noexcept = 0;
  virtual IOptimizationProfile* createOptimizationProfile() noexcept = 0;
  virtual IHostMemory* buildSerializedNetwork(INetworkDefinition& network, IBuilderConfig& config) noexcept = 0;
};

}  // namespace nvinfer1

// As in TensorRT: the library exports a C entry point; the header wraps it inline.
extern "C" void* createInferBuilder_INTERNAL(void* logger, int32_t version) noexcept;

namespace nvinfer1 {
namespace {
inline IBuilder* createInferBuilder(ILogger& logger) noexcept {
  return static_cast<IBuilder*>(createInferBuilder_INTERNAL(&logger, NV_TENSORRT_VERSION));
}
}  // namespace
}  // namespace nvinfer1
