#include "backends/tensorrt/tensorrt_backend.h"

#include <NvInfer.h>
#include <NvInferVersion.h>
#include <NvOnnxParser.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

#include "backends/tensorrt/factory.h"
#include "backends/tensorrt/progress_adapter.h"
#include "platform/atomic_file.h"

#ifndef TRTWATCH_TENSORRT_ROOT
#define TRTWATCH_TENSORRT_ROOT ""
#endif

// Weakly typed precision flags (kFP16, kBF16, kINT8) and kEXPLICIT_BATCH are
// deprecated in TensorRT 10; they are still how a 9.x/10.x user asks for them.
#define TRTWATCH_ALLOW_DEPRECATED_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define TRTWATCH_ALLOW_DEPRECATED_END _Pragma("GCC diagnostic pop")

namespace trtwatch::trt {

namespace {

// TensorRT 9+ objects are released with delete.
template <class T>
using TrtPtr = std::unique_ptr<T>;

using DimValue = std::remove_reference_t<decltype(std::declval<nvinfer1::Dims&>().d[0])>;

std::string HeaderVersion() {
  return std::to_string(NV_TENSORRT_MAJOR) + "." + std::to_string(NV_TENSORRT_MINOR) + "." +
         std::to_string(NV_TENSORRT_PATCH);
}

std::string FormatDims(const nvinfer1::Dims& dims) {
  std::string text;
  for (int32_t i = 0; i < dims.nbDims; ++i) {
    if (i > 0) text += 'x';
    text += std::to_string(static_cast<int64_t>(dims.d[i]));
  }
  return text.empty() ? "scalar" : text;
}

bool ToDims(const Shape& shape, nvinfer1::Dims* dims) {
  if (shape.size() > static_cast<size_t>(nvinfer1::Dims::MAX_DIMS)) return false;
  *dims = nvinfer1::Dims{};
  dims->nbDims = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] > static_cast<int64_t>(std::numeric_limits<DimValue>::max())) return false;
    dims->d[i] = static_cast<DimValue>(shape[i]);
  }
  return true;
}

nvinfer1::NetworkDefinitionCreationFlags NetworkFlags(const BuildOptions& options) {
  nvinfer1::NetworkDefinitionCreationFlags flags = 0;
#if NV_TENSORRT_MAJOR < 10
  // 9.x: ONNX models need an explicit-batch network (10.x has nothing else).
  flags |= 1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kEXPLICIT_BATCH);
#endif
#if NV_TENSORRT_MAJOR < 11
  if (options.strongly_typed) {
    flags |= 1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED);
  }
#else
  // 11.x: every network is strongly typed; the flag is deprecated and implied.
  static_cast<void>(options);
#endif
  return flags;
}

}  // namespace

Facts TensorRtFacts(int32_t runtime_version, const NvmlReport& nvml) {
  Facts facts;
  facts.emplace_back("tensorrt_version", FormatTensorRtVersion(runtime_version));
  facts.emplace_back("tensorrt_headers", HeaderVersion());
  if (!nvml.loaded) {
    facts.emplace_back("gpu_note", nvml.error.empty() ? "NVML not available" : nvml.error);
    return facts;
  }
  if (!nvml.gpus.empty()) {
    // CUDA's device 0, which the builder uses, is NVML's first device unless
    // CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER reorder them.
    const GpuInfo& gpu = nvml.gpus.front();
    facts.emplace_back("gpu", gpu.name);
    facts.emplace_back("gpu_compute_capability", std::to_string(gpu.cc_major) + "." + std::to_string(gpu.cc_minor));
    facts.emplace_back("gpu_memory", FormatGpuMemory(gpu.memory_total_bytes));
  }
  facts.emplace_back("gpu_count", std::to_string(nvml.gpus.size()));
  if (!nvml.driver_version.empty()) facts.emplace_back("driver_version", nvml.driver_version);
  if (nvml.cuda_driver_version > 0) facts.emplace_back("cuda_driver_version", FormatCudaVersion(nvml.cuda_driver_version));
  return facts;
}

TensorRtBackend::TensorRtBackend(BuildOptions options, const std::string& nvml_library)
    : options_(std::move(options)),
      facts_(TensorRtFacts(getInferLibVersion(), QueryNvml(nvml_library))),
      logger_(options_.verbose ? trtwatch::Severity::kVerbose : trtwatch::Severity::kWarning) {}

BuildInfo TensorRtBackend::Describe() const {
  BuildInfo info;
  info.backend = "tensorrt";
  info.model = options_.model;
  info.facts = facts_;
  info.facts.emplace_back("engine", options_.output);
  if (!options_.timing_cache.empty()) info.facts.emplace_back("timing_cache", options_.timing_cache);
  return info;
}

std::string TensorRtBackend::WithErrors(const std::string& message) const {
  const std::vector<std::string> errors = logger_.RecentErrors();
  if (errors.empty()) return message;
  std::string text = message + ". TensorRT said:";
  for (const std::string& line : errors) text += "\n  " + line;
  return text;
}

BuildOutcome TensorRtBackend::Build(Monitor& monitor) {
  logger_.ClearErrors();
  logger_.Attach(&monitor);
  // Detach on every way out: TensorRT may log after the build (from destructors).
  struct Detach {
    LoggerAdapter& logger;
    ~Detach() { logger.Attach(nullptr); }
  } detach{logger_};
  return BuildAttached(monitor);
}

BuildOutcome TensorRtBackend::BuildAttached(Monitor& monitor) {
  BuildOutcome outcome;
  auto fail = [&](const std::string& message) {
    outcome.engine_built = false;
    outcome.error = WithErrors(message);
    return outcome;
  };
  // A cancel request between the stages: stop without a TensorRT error of our making.
  auto cancelled = [&] {
    outcome.engine_built = false;
    outcome.error.clear();
    return outcome;
  };

  // Declared before every TensorRT object so that they outlive them all, as TensorRT
  // requires of the progress monitor and of a timing cache.
  ProgressAdapter adapter(monitor);
  TrtPtr<nvinfer1::ITimingCache> cache;

  TrtPtr<nvinfer1::IBuilder> builder(nvinfer1::createInferBuilder(logger_));
  if (!builder) {
    return fail("TensorRT could not create a builder: is an NVIDIA GPU with a working driver visible? "
                "(`trtwatch doctor` shows what trtwatch sees)");
  }
  if (options_.max_threads && !builder->setMaxThreads(*options_.max_threads)) {
    return fail("TensorRT refused --maxThreads=" + std::to_string(*options_.max_threads));
  }
  TrtPtr<nvinfer1::INetworkDefinition> network(builder->createNetworkV2(NetworkFlags(options_)));
  if (!network) return fail("TensorRT could not create a network definition");
  TrtPtr<nvonnxparser::IParser> parser(nvonnxparser::createParser(*network, logger_));
  if (!parser) return fail("TensorRT could not create the ONNX parser");
  const int verbosity = static_cast<int>(options_.verbose ? nvinfer1::ILogger::Severity::kVERBOSE
                                                          : nvinfer1::ILogger::Severity::kWARNING);
  if (!parser->parseFromFile(options_.model.c_str(), verbosity)) {
    std::string message = "cannot parse the ONNX model \"" + options_.model + "\"";
    const int count = parser->getNbErrors();
    for (int i = 0; i < count; ++i) {
      const nvonnxparser::IParserError* parse_error = parser->getError(i);
      if (parse_error != nullptr && parse_error->desc() != nullptr) message += (i == 0 ? ": " : "; ") + std::string(parse_error->desc());
    }
    return fail(message);
  }
  if (monitor.IsCancelRequested()) return cancelled();

  TrtPtr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
  if (!config) return fail("TensorRT could not create a builder config");
#if NV_TENSORRT_MAJOR < 11
  TRTWATCH_ALLOW_DEPRECATED_BEGIN
  if (options_.fp16) config->setFlag(nvinfer1::BuilderFlag::kFP16);
  if (options_.bf16) config->setFlag(nvinfer1::BuilderFlag::kBF16);
  if (options_.int8) config->setFlag(nvinfer1::BuilderFlag::kINT8);
  TRTWATCH_ALLOW_DEPRECATED_END
#else
  if (options_.fp16 || options_.bf16 || options_.int8) {
    std::string reason;
    CheckForTensorRtMajor(options_, NV_TENSORRT_MAJOR, &reason);
    return fail(reason);
  }
#endif
  if (options_.no_builder_cache) config->setFlag(nvinfer1::BuilderFlag::kDISABLE_TIMING_CACHE);
  if (options_.error_on_timing_cache_miss) config->setFlag(nvinfer1::BuilderFlag::kERROR_ON_TIMING_CACHE_MISS);
  if (options_.workspace_bytes) {
    config->setMemoryPoolLimit(nvinfer1::MemoryPoolType::kWORKSPACE, static_cast<std::size_t>(*options_.workspace_bytes));
  }
  if (options_.optimization_level) config->setBuilderOptimizationLevel(*options_.optimization_level);
  if (options_.max_aux_streams) config->setMaxAuxStreams(*options_.max_aux_streams);

  // Dynamic shapes: one optimization profile holding every range given; every input
  // with a dynamic dimension needs one.
  const int32_t input_count = network->getNbInputs();
  std::string input_list;
  for (int32_t i = 0; i < input_count; ++i) {
    const nvinfer1::ITensor* input = network->getInput(i);
    input_list += std::string(i == 0 ? "" : ", ") + input->getName() + " (" + FormatDims(input->getDimensions()) + ")";
  }
  for (const ShapeRange& range : options_.shapes) {
    bool found = false;
    for (int32_t i = 0; i < input_count && !found; ++i) {
      const nvinfer1::ITensor* input = network->getInput(i);
      if (range.input != input->getName()) continue;
      found = true;
      if (input->getDimensions().nbDims != static_cast<int32_t>(range.opt.size())) {
        return fail("input \"" + range.input + "\" has shape " + FormatDims(input->getDimensions()) +
                    ", but the shapes given for it have " + std::to_string(range.opt.size()) + " dimensions");
      }
    }
    if (!found) return fail("the model has no input named \"" + range.input + "\"; its inputs are: " + input_list);
  }
  for (int32_t i = 0; i < input_count; ++i) {
    const nvinfer1::ITensor* input = network->getInput(i);
    const nvinfer1::Dims dims = input->getDimensions();
    bool dynamic = false;
    for (int32_t d = 0; d < dims.nbDims; ++d) dynamic = dynamic || dims.d[d] < 0;
    if (!dynamic) continue;
    bool covered = false;
    for (const ShapeRange& range : options_.shapes) covered = covered || range.input == input->getName();
    if (!covered) {
      return fail("input \"" + std::string(input->getName()) + "\" has a dynamic shape (" + FormatDims(dims) +
                  "): give its range with --minShapes/--optShapes/--maxShapes, e.g. --optShapes=" +
                  input->getName() + ":1x...");
    }
  }
  if (!options_.shapes.empty()) {
    nvinfer1::IOptimizationProfile* profile = builder->createOptimizationProfile();  // owned by the builder
    if (profile == nullptr) return fail("TensorRT could not create an optimization profile");
    for (const ShapeRange& range : options_.shapes) {
      const std::pair<nvinfer1::OptProfileSelector, const Shape*> sides[] = {
          {nvinfer1::OptProfileSelector::kMIN, &range.min},
          {nvinfer1::OptProfileSelector::kOPT, &range.opt},
          {nvinfer1::OptProfileSelector::kMAX, &range.max}};
      for (const auto& [selector, shape] : sides) {
        nvinfer1::Dims dims;
        if (!ToDims(*shape, &dims) || !profile->setDimensions(range.input.c_str(), selector, dims)) {
          return fail("TensorRT rejected the shapes for input \"" + range.input + "\" (min " + FormatShape(range.min) +
                      ", opt " + FormatShape(range.opt) + ", max " + FormatShape(range.max) + ")");
        }
      }
    }
    if (config->addOptimizationProfile(profile) < 0) {
      return fail("TensorRT rejected the optimization profile made from --minShapes/--optShapes/--maxShapes");
    }
  }

  // Timing cache: load what is there, build with it, save the updated cache.
  if (!options_.timing_cache.empty()) {
    std::string blob;
    std::string read_error;
    int read_errno = 0;
    if (!ReadWholeFile(options_.timing_cache, &blob, &read_error, &read_errno)) {
      if (read_errno != ENOENT) return fail("--timing-cache: " + read_error);
      blob.clear();  // first build with this cache: start an empty one
      monitor.Log(trtwatch::Severity::kInfo, "timing cache \"" + options_.timing_cache +
                                                 "\" does not exist yet; it will be written after the build");
    }
    cache.reset(config->createTimingCache(blob.data(), blob.size()));
    if (!cache && !blob.empty() && options_.timing_cache_ignore_mismatch) {
      monitor.Log(trtwatch::Severity::kWarning, "timing cache \"" + options_.timing_cache +
                                                    "\" is unreadable by this TensorRT; starting a new one");
      cache.reset(config->createTimingCache(nullptr, 0));
    }
    if (!cache) {
      return fail("timing cache \"" + options_.timing_cache + "\" cannot be read by TensorRT " +
                  FormatTensorRtVersion(getInferLibVersion()) +
                  " (corrupt, or written by another TensorRT version): delete it to start a new one, or pass "
                  "--timing-cache-ignore-mismatch to replace it");
    }
    if (!config->setTimingCache(*cache, options_.timing_cache_ignore_mismatch)) {
      return fail("timing cache \"" + options_.timing_cache +
                  "\" was made on another GPU, CUDA or TensorRT version: delete it to start a new one, or pass "
                  "--timing-cache-ignore-mismatch to use it anyway");
    }
  }
  if (monitor.IsCancelRequested()) return cancelled();

  config->setProgressMonitor(&adapter);
  TrtPtr<nvinfer1::IHostMemory> engine(builder->buildSerializedNetwork(*network, *config));
  config->setProgressMonitor(nullptr);

  // Whatever TensorRT learnt is kept, also when the build was cancelled.
  if (cache && (engine || monitor.IsCancelRequested())) {
    if (const nvinfer1::ITimingCache* used = config->getTimingCache()) {
      TrtPtr<nvinfer1::IHostMemory> data(used->serialize());
      if (data) SaveTimingCache(data->data(), data->size(), monitor);
    }
  }
  if (monitor.IsCancelRequested()) return cancelled();
  if (!engine) return fail("TensorRT built no engine");

  std::string write_error;
  if (!WriteFileAtomically(options_.output,
                           std::string_view(static_cast<const char*>(engine->data()), engine->size()),
                           &write_error)) {
    return fail("the engine was built but not saved: " + write_error);
  }
  outcome.engine_built = true;
  return outcome;
}

void TensorRtBackend::SaveTimingCache(const void* data, size_t size, Monitor& monitor) const {
  std::string error;
  if (!WriteFileAtomically(options_.timing_cache, std::string_view(static_cast<const char*>(data), size), &error)) {
    monitor.Log(trtwatch::Severity::kWarning, "timing cache not saved: " + error);
  }
}

CompiledTensorRt CompiledWith() {
  CompiledTensorRt compiled;
  compiled.built = true;
  compiled.header_version = HeaderVersion();
  compiled.root = TRTWATCH_TENSORRT_ROOT;
#ifdef TRTWATCH_TENSORRT_TEST_DOUBLE
  compiled.test_double = true;
#endif
  return compiled;
}

std::unique_ptr<Backend> MakeTensorRtBackend(const BuildOptions& options, std::string* error) {
  if (!CheckForTensorRtMajor(options, NV_TENSORRT_MAJOR, error)) return nullptr;
  // TensorRT's library must be the major version the headers were.
  const int32_t runtime = getInferLibVersion();
  const int32_t runtime_major = runtime >= 100000 ? runtime / 10000 : runtime / 1000;
  if (runtime_major != NV_TENSORRT_MAJOR) {
    *error = "this trtwatch was built against TensorRT " + HeaderVersion() + " but loaded libnvinfer " +
             FormatTensorRtVersion(runtime) + "; rebuild trtwatch against the installed TensorRT (-DTensorRT_ROOT=...) "
             "or put the matching libnvinfer first on LD_LIBRARY_PATH";
    return nullptr;
  }
  return std::make_unique<TensorRtBackend>(options);
}

}  // namespace trtwatch::trt
