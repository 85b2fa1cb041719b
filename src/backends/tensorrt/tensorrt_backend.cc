#include "backends/tensorrt/tensorrt_backend.h"

#include <NvInfer.h>
#include <NvInferVersion.h>
#include <NvOnnxParser.h>

#include <cstring>
#include <algorithm>
#include <limits>
#include <optional>
#include <vector>
#include <memory>
#include <type_traits>
#include <utility>

#include "backends/tensorrt/builder_config.h"
#include "backends/tensorrt/factory.h"
#include "backends/tensorrt/progress_adapter.h"
#include "backends/tensorrt/tensorrt_timing_cache.h"
#include "backends/timing_cache_file.h"
#include "platform/atomic_file.h"

#ifndef TRTWATCH_TENSORRT_ROOT
#define TRTWATCH_TENSORRT_ROOT ""
#endif

namespace trtwatch::trt {

namespace {

// TensorRT 9+ objects are released with delete.
template <class T>
using TrtPtr = std::unique_ptr<T>;

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

// Parses the model into the parser's network; empty, or why TensorRT could not.
std::string ParseModel(nvonnxparser::IParser& parser, const BuildOptions& options) {
  const int verbosity = static_cast<int>(options.verbose ? nvinfer1::ILogger::Severity::kVERBOSE
                                                         : nvinfer1::ILogger::Severity::kWARNING);
  if (parser.parseFromFile(options.model.c_str(), verbosity)) return "";
  std::string message = "cannot parse the ONNX model \"" + options.model + "\"";
  const int count = parser.getNbErrors();
  for (int i = 0; i < count; ++i) {
    const nvonnxparser::IParserError* parse_error = parser.getError(i);
    if (parse_error != nullptr && parse_error->desc() != nullptr) message += (i == 0 ? ": " : "; ") + std::string(parse_error->desc());
  }
  return message;
}

// What the user gave must fit the model: names, ranks, shape-tensor value counts.
// Empty, or what does not fit.
std::string CheckGivenShapes(nvinfer1::INetworkDefinition& network, const std::vector<Profile>& profiles) {
  const int32_t input_count = network.getNbInputs();
  std::string input_list;
  for (int32_t i = 0; i < input_count; ++i) {
    const nvinfer1::ITensor* input = network.getInput(i);
    input_list += std::string(i == 0 ? "" : ", ") + input->getName() + " (" + FormatDims(input->getDimensions()) +
                  (input->isShapeTensor() ? ", a shape tensor" : "") + ")";
  }
  for (const Profile& profile : profiles) {
    for (const ShapeRange& range : profile) {
      const nvinfer1::ITensor* input = nullptr;
      for (int32_t i = 0; i < input_count && input == nullptr; ++i) {
        if (range.input == network.getInput(i)->getName()) input = network.getInput(i);
      }
      if (input == nullptr) {
        return "the model has no input named \"" + range.input + "\"; its inputs are: " + input_list;
      }
      const nvinfer1::Dims dims = input->getDimensions();
      // A shape tensor's "shape" is its values: as many as its one dimension (1 if scalar).
      const int64_t expected = input->isShapeTensor() ? (dims.nbDims == 0 ? 1 : dims.d[0]) : dims.nbDims;
      if (expected >= 0 && expected != static_cast<int64_t>(range.opt.size())) {
        return "input \"" + range.input + "\" has shape " + FormatDims(dims) + ", but the " +
               (input->isShapeTensor() ? "values" : "shapes") + " given for it have " +
               std::to_string(range.opt.size()) + (input->isShapeTensor() ? " values" : " dimensions");
      }
    }
  }
  return "";
}

// trtexec's shape for a dynamic input given none: 1 for each dynamic dimension (for a
// shape tensor, as many 1s as it has values).
Shape OnesFor(const nvinfer1::ITensor& input) {
  const nvinfer1::Dims dims = input.getDimensions();
  Shape ones;
  if (input.isShapeTensor()) {
    ones.assign(dims.nbDims == 0 ? 1 : static_cast<size_t>(std::max<int64_t>(dims.d[0], 0)), 1);
  } else {
    for (int32_t d = 0; d < dims.nbDims; ++d) ones.push_back(dims.d[d] > 0 ? dims.d[d] : 1);
  }
  return ones;
}

// Adds the filled profiles to the config; empty, or the one TensorRT rejected.
std::string AddProfiles(nvinfer1::IBuilderConfig& config,
                        const std::vector<nvinfer1::IOptimizationProfile*>& profiles) {
  for (size_t p = 0; p < profiles.size(); ++p) {
    if (config.addOptimizationProfile(profiles[p]) < 0) {
      return "TensorRT rejected optimization profile " + std::to_string(p) +
             " (made from --minShapes/--optShapes/--maxShapes)";
    }
  }
  return "";
}

// The --timing-cache flags, as every builder's cache file follows them, the file named
// (--timing-cache auto: the one for this TensorRT and GPU).
TimingCacheFlags CacheFlags(const BuildOptions& options, int32_t tensorrt_version, const std::optional<BuildGpu>& gpu) {
  const bool automatic = options.timing_cache == kAutoTimingCache;
  const TimingCacheFlags flags{automatic ? "" : options.timing_cache, options.timing_cache_strict,
                               options.timing_cache_ignore_mismatch, automatic ? options.timing_cache_folder : "",
                               options.timing_cache_max_bytes};
  const std::string gpu_name = gpu ? TimingCacheGpu(gpu->name, gpu->cc_major, gpu->cc_minor) : "unknown GPU";
  return WithCacheFile(flags, "TensorRT " + FormatTensorRtVersion(tensorrt_version), gpu_name);
}

}  // namespace

Facts TensorRtFacts(int32_t runtime_version, const CudaReport& cuda, const NvmlReport& nvml, int ordinal,
                    std::optional<BuildGpu>* found) {
  Facts facts;
  facts.emplace_back("tensorrt_version", FormatTensorRtVersion(runtime_version));
  facts.emplace_back("tensorrt_headers", HeaderVersion());
  std::optional<BuildGpu> gpu;
  std::string note;
  if (cuda.loaded) {
    // The builder's device in CUDA's numbering; NVML's entry for it by PCI bus id.
    if (const std::string problem = CudaDeviceProblem(cuda, ordinal); !problem.empty()) {
      note = problem;
    } else {
      const CudaDevice& device = cuda.devices[static_cast<size_t>(ordinal)];
      gpu = BuildGpu{device.name, device.cc_major, device.cc_minor, device.memory_total_bytes, device.pci_bus_id, ""};
      if (const GpuInfo* entry = NvmlEntryFor(nvml, device)) gpu->uuid = entry->uuid;
    }
  } else if (nvml.loaded && ordinal >= 0 && static_cast<size_t>(ordinal) < nvml.gpus.size()) {
    const GpuInfo& entry = nvml.gpus[static_cast<size_t>(ordinal)];
    gpu = BuildGpu{entry.name, entry.cc_major, entry.cc_minor, entry.memory_total_bytes, entry.pci_bus_id, entry.uuid};
    note = cuda.error + ": GPU facts are NVML's GPU " + std::to_string(ordinal) + ", which CUDA may number differently";
  } else {
    note = !cuda.error.empty() ? cuda.error : "the CUDA driver is not available";
    if (!nvml.error.empty()) note += "; " + nvml.error;
  }
  if (gpu) {
    facts.emplace_back("gpu", gpu->name);
    facts.emplace_back("gpu_device", std::to_string(ordinal));
    facts.emplace_back("gpu_compute_capability", std::to_string(gpu->cc_major) + "." + std::to_string(gpu->cc_minor));
    facts.emplace_back("gpu_memory", FormatGpuMemory(gpu->memory_total_bytes));
    if (!gpu->pci_bus_id.empty()) facts.emplace_back("gpu_pci_bus_id", gpu->pci_bus_id);
    if (!gpu->uuid.empty()) facts.emplace_back("gpu_uuid", gpu->uuid);
  }
  if (cuda.loaded) {
    facts.emplace_back("gpu_count", std::to_string(cuda.devices.size()));
  } else if (nvml.loaded) {
    facts.emplace_back("gpu_count", std::to_string(nvml.gpus.size()));
  }
  if (!nvml.driver_version.empty()) facts.emplace_back("driver_version", nvml.driver_version);
  const int cuda_version = nvml.cuda_driver_version > 0 ? nvml.cuda_driver_version : cuda.driver_version;
  if (cuda_version > 0) facts.emplace_back("cuda_driver_version", FormatCudaVersion(cuda_version));
  if (!note.empty()) facts.emplace_back("gpu_note", note);
  if (found != nullptr) *found = gpu;
  return facts;
}

TensorRtBackend::TensorRtBackend(BuildOptions options, const LoadedTensorRt& tensorrt, GpuLibraries gpu_libraries)
    : options_(std::move(options)),
      tensorrt_(tensorrt),
      gpu_libraries_(std::move(gpu_libraries)),
      logger_(options_.verbose ? trtwatch::Severity::kVerbose : trtwatch::Severity::kWarning) {
  const CudaReport cuda = QueryCudaDevices(gpu_libraries_.cuda);
  const NvmlReport nvml = QueryNvml(gpu_libraries_.nvml);
  std::optional<BuildGpu> gpu;
  facts_ = TensorRtFacts(tensorrt.Version(), cuda, nvml, options_.device.value_or(0), &gpu);
  if (gpu) gpu_compute_capability_ = gpu->cc_major * 10 + gpu->cc_minor;
  timing_cache_ = CacheFlags(options_, tensorrt.Version(), gpu);
  if (options_.device) {
    if (const std::string problem = CudaDeviceProblem(cuda, *options_.device); !problem.empty()) {
      device_problem_ = "--device=" + std::to_string(*options_.device) + ": " + problem;
    }
  }
}

BuildInfo TensorRtBackend::Describe() const {
  BuildInfo info;
  info.backend = "tensorrt";
  info.model = options_.model;
  info.facts = facts_;
  if (!options_.output.empty()) info.facts.emplace_back("engine", options_.output);
  if (!timing_cache_.file.empty()) info.facts.emplace_back("timing_cache", timing_cache_.file);
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

TrtPtr<nvinfer1::IBuilder> TensorRtBackend::MakeBuilder(Monitor& monitor, std::string* error) {
  // Plugins as trtexec loads them: TensorRT's standard set, then the user's.
  std::string plugin_error;
  if (!tensorrt_.InitPlugins(logger_, &plugin_error)) monitor.Log(trtwatch::Severity::kWarning, plugin_error);
  for (const std::string& path : options_.static_plugins) {
    if (!tensorrt_.LoadStaticPlugin(path, &plugin_error)) {
      *error = plugin_error;
      return nullptr;
    }
  }
  TrtPtr<nvinfer1::IBuilder> builder(tensorrt_.CreateBuilder(logger_));
  if (!builder) {
    *error = "TensorRT could not create a builder: is an NVIDIA GPU with a working driver visible? "
             "(`trtwatch doctor` shows what trtwatch sees)";
    return nullptr;
  }
  for (const std::string& path : options_.dynamic_plugins) {
    if (builder->getPluginRegistry().loadLibrary(path.c_str()) == nullptr) {
      *error = "--dynamicPlugins: TensorRT could not load the plugin library \"" + path + "\"";
      return nullptr;
    }
  }
  if (options_.max_threads && !builder->setMaxThreads(*options_.max_threads)) {
    *error = "TensorRT refused --maxThreads=" + std::to_string(*options_.max_threads);
    return nullptr;
  }
  return builder;
}

BuildOutcome TensorRtBackend::BuildAttached(Monitor& monitor) {
  auto fail = [&](const std::string& message) { return BuildOutcome{false, WithErrors(message)}; };
  // A cancel request between the stages: stop without a TensorRT error of our making.
  auto cancelled = [] { return BuildOutcome{}; };

  // --device: TensorRT builds on the device current on this thread (trtexec calls
  // cudaSetDevice); it stays current while any TensorRT object below lives. Without
  // it, CUDA's device 0, the runtime's default.
  std::unique_ptr<CudaDeviceSelection> device;
  if (options_.device) {
    std::string device_error;
    device = CudaDeviceSelection::Select(*options_.device, &device_error, gpu_libraries_.cuda);
    if (!device) return fail("--device=" + std::to_string(*options_.device) + ": " + device_error);
  }

  // Declared before every TensorRT object so that they outlive them all, as TensorRT
  // requires of the progress monitor and of a timing cache.
  ProgressAdapter adapter(monitor);
  std::optional<TensorRtTimingCache> cache;

  for (const std::string& notice : options_.notices) monitor.Log(trtwatch::Severity::kWarning, notice);
  std::string refused;
  TrtPtr<nvinfer1::IBuilder> builder = MakeBuilder(monitor, &refused);
  if (!builder) return fail(refused);
  TrtPtr<nvinfer1::INetworkDefinition> network(builder->createNetworkV2(NetworkFlags(options_)));
  if (!network) return fail("TensorRT could not create a network definition");
  TrtPtr<nvonnxparser::IParser> parser(tensorrt_.CreateParser(*network, logger_));
  if (!parser) return fail("TensorRT could not create the ONNX parser");
  if (const std::string problem = ParseModel(*parser, options_); !problem.empty()) return fail(problem);
  if (monitor.IsCancelRequested()) return cancelled();

  TrtPtr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
  if (!config) return fail("TensorRT could not create a builder config");
  if (!ConfigureBuilder(options_, gpu_compute_capability_, *config, &refused)) return fail(refused);
  if (!ApplyProfiles(*builder, *network, *config, monitor, &refused)) return fail(refused);

  if (!timing_cache_.file.empty() && !options_.no_builder_cache) {  // --noBuilderCache wins
    cache.emplace(*config, logger_, FormatTensorRtVersion(tensorrt_.Version()));
    const Status attached = AttachTimingCacheFile(timing_cache_, *cache, monitor);
    if (!attached.ok()) return fail(attached.error());
  }
  if (monitor.IsCancelRequested()) return cancelled();

  config->setProgressMonitor(&adapter);
  TrtPtr<nvinfer1::IHostMemory> engine(builder->buildSerializedNetwork(*network, *config));
  config->setProgressMonitor(nullptr);

  // Whatever TensorRT learnt is kept, also when the build was cancelled.
  if (cache && (engine || monitor.IsCancelRequested())) SaveTimingCacheFile(timing_cache_, *cache, monitor);
  if (monitor.IsCancelRequested()) return cancelled();
  if (!engine) return fail("TensorRT built no engine");

  std::string write_error;
  if (!options_.output.empty() && !WriteFileAtomically(options_.output,
                           std::string_view(static_cast<const char*>(engine->data()), engine->size()),
                           &write_error)) {
    return fail("the engine was built but not saved: " + write_error);
  }
  return BuildOutcome{true, ""};
}

bool TensorRtBackend::ApplyProfiles(nvinfer1::IBuilder& builder, nvinfer1::INetworkDefinition& network,
                                    nvinfer1::IBuilderConfig& config, Monitor& monitor, std::string* error) const {
  if (std::string problem = CheckGivenShapes(network, options_.profiles); !problem.empty()) {
    *error = std::move(problem);
    return false;
  }
  const int32_t input_count = network.getNbInputs();
  const size_t profile_count = std::max<size_t>(1, options_.profiles.size());
  std::vector<nvinfer1::IOptimizationProfile*> profiles;  // owned by the builder
  bool dynamic_model = false;
  for (int32_t i = 0; i < input_count; ++i) {
    const nvinfer1::ITensor* input = network.getInput(i);
    const nvinfer1::Dims dims = input->getDimensions();
    bool dynamic = input->isShapeTensor();
    for (int32_t d = 0; d < dims.nbDims; ++d) dynamic = dynamic || dims.d[d] < 0;
    if (!dynamic) continue;
    dynamic_model = true;
    while (profiles.size() < profile_count) {
      profiles.push_back(builder.createOptimizationProfile());
      if (profiles.back() == nullptr) {
        *error = "TensorRT could not create an optimization profile";
        return false;
      }
    }
    for (size_t p = 0; p < profile_count; ++p) {
      ShapeRange range;
      const ShapeRange* given = nullptr;
      if (p < options_.profiles.size()) {
        for (const ShapeRange& r : options_.profiles[p]) given = r.input == input->getName() ? &r : given;
      }
      if (given != nullptr) {
        range = *given;
      } else {
        // trtexec: a dynamic input without shapes gets 1 for each dynamic dimension.
        const Shape ones = OnesFor(*input);
        range = {input->getName(), ones, ones, ones};
        monitor.Log(trtwatch::Severity::kWarning,
                    "input \"" + std::string(input->getName()) + "\" is dynamic (" + FormatDims(dims) +
                        ") but no shapes were given" +
                        (profile_count > 1 ? " in --profile=" + std::to_string(p) : std::string()) + ": using " +
                        FormatShape(ones) + " (as trtexec does); give --minShapes/--optShapes/--maxShapes=" +
                        input->getName() + ":... to choose");
      }
      if (!SetProfileRange(*profiles[p], range, input->isShapeTensor())) {
        *error = "TensorRT rejected the " + std::string(input->isShapeTensor() ? "values" : "shapes") +
                 " for input \"" + range.input + "\" (min " + FormatShape(range.min) + ", opt " +
                 FormatShape(range.opt) + ", max " + FormatShape(range.max) + ")";
        return false;
      }
    }
  }
  if (!dynamic_model) {
    if (!options_.profiles.empty()) {
      monitor.Log(trtwatch::Severity::kWarning, "the model's inputs are all static: the shapes given are not used");
    }
    return true;
  }
  *error = AddProfiles(config, profiles);
  return error->empty();
}

CompiledTensorRt CompiledWith() {
  CompiledTensorRt compiled;
  compiled.built = true;
  compiled.header_version = HeaderVersion();
  compiled.root = TRTWATCH_TENSORRT_ROOT;
  compiled.major = NV_TENSORRT_MAJOR;
#ifdef TRTWATCH_TENSORRT_TEST_DOUBLE
  compiled.test_double = true;
#endif
  return compiled;
}

std::unique_ptr<Backend> MakeTensorRtBackend(const BuildOptions& options, std::string* error) {
  if (!CheckForTensorRtMajor(options, NV_TENSORRT_MAJOR, error)) return nullptr;
  const LoadedTensorRt* tensorrt = LoadedTensorRt::ForProcess(error);
  if (tensorrt == nullptr) {
    *error = "cannot build \"" + options.model + "\": " + *error;
    return nullptr;
  }
  return MakeTensorRtBackend(options, *tensorrt, error);
}

std::unique_ptr<Backend> MakeTensorRtBackend(const BuildOptions& options, const LoadedTensorRt& tensorrt,
                                             std::string* error) {
  if (!CheckForTensorRtMajor(options, NV_TENSORRT_MAJOR, error)) return nullptr;
  // TensorRT's library must be the major version the headers were.
  const int32_t runtime = tensorrt.Version();
  if (TensorRtMajorOf(runtime) != NV_TENSORRT_MAJOR) {
    *error = "this trtwatch was built against TensorRT " + HeaderVersion() + " but loaded libnvinfer " +
             FormatTensorRtVersion(runtime) + "; rebuild trtwatch against the installed TensorRT (-DTensorRT_ROOT=...) "
             "or put the matching libnvinfer first on LD_LIBRARY_PATH";
    return nullptr;
  }
  auto backend = std::make_unique<TensorRtBackend>(options, tensorrt);
  if (!backend->DeviceProblem().empty()) {
    *error = backend->DeviceProblem();
    return nullptr;
  }
  return backend;
}

}  // namespace trtwatch::trt
