#include "backends/tensorrt/tensorrt_library.h"

#include <NvInferVersion.h>

namespace trtwatch::trt {

namespace {

std::string InstallHint() {
  const std::string major = std::to_string(NV_TENSORRT_MAJOR);
  return "install TensorRT " + major + " (NVIDIA's SDK archive, the libnvinfer" + major +
         " and libnvonnxparsers" + major + " packages, or the tensorrt-cu* pip wheels) and put its lib/ folder on "
         "LD_LIBRARY_PATH; `trtwatch doctor` shows what is found";
}

}  // namespace

std::unique_ptr<LoadedTensorRt> LoadedTensorRt::Load(const TensorRtLibraryNames& names, std::string* error) {
  std::unique_ptr<LoadedTensorRt> loaded(new LoadedTensorRt);
  loaded->names_ = names;
  std::string why;
  // nvinfer first: the parser and the plugins need it.
  loaded->nvinfer_ = SharedLibrary::Open(names.nvinfer, &why);
  if (!loaded->nvinfer_) {
    *error = "TensorRT " + std::to_string(NV_TENSORRT_MAJOR) + " is not installed here (this trtwatch was built for it): " +
             why + "; " + InstallHint();
    return nullptr;
  }
  loaded->parser_ = SharedLibrary::Open(names.onnx_parser, &why);
  if (!loaded->parser_) {
    *error = "TensorRT's ONNX parser is not installed here (found " + loaded->nvinfer_->Path() + " but not " +
             names.onnx_parser + "): " + why + "; " + InstallHint();
    return nullptr;
  }
  loaded->get_version_ = loaded->nvinfer_->Function<VersionFn>("getInferLibVersion");
  loaded->create_builder_ = loaded->nvinfer_->Function<CreateBuilderFn>("createInferBuilder_INTERNAL");
  loaded->create_parser_ = loaded->parser_->Function<CreateParserFn>("createNvOnnxParser_INTERNAL");
  const char* missing = loaded->get_version_ == nullptr      ? "getInferLibVersion"
                        : loaded->create_builder_ == nullptr ? "createInferBuilder_INTERNAL"
                        : loaded->create_parser_ == nullptr  ? "createNvOnnxParser_INTERNAL"
                                                             : nullptr;
  if (missing != nullptr) {
    *error = std::string(missing) + " is missing from " +
             (std::string(missing) == "createNvOnnxParser_INTERNAL" ? loaded->parser_->Path() : loaded->nvinfer_->Path()) +
             ": not a TensorRT library, or a damaged install; reinstall TensorRT " + std::to_string(NV_TENSORRT_MAJOR);
    return nullptr;
  }
  return loaded;
}

const LoadedTensorRt* LoadedTensorRt::ForProcess(std::string* error) {
  struct Once {
    std::unique_ptr<LoadedTensorRt> loaded;
    std::string error;
  };
  // Loaded once, never unloaded (see the header); a static's initialisation is
  // thread-safe.
  static const Once* const once = [] {
    auto* o = new Once;
    o->loaded = Load(LibraryNamesForMajor(NV_TENSORRT_MAJOR), &o->error);
    return o;
  }();
  if (!once->loaded) *error = once->error;
  return once->loaded.get();
}

nvinfer1::IBuilder* LoadedTensorRt::CreateBuilder(nvinfer1::ILogger& logger) const {
  return static_cast<nvinfer1::IBuilder*>(create_builder_(&logger, NV_TENSORRT_VERSION));
}

nvonnxparser::IParser* LoadedTensorRt::CreateParser(nvinfer1::INetworkDefinition& network,
                                                    nvinfer1::ILogger& logger) const {
  return static_cast<nvonnxparser::IParser*>(create_parser_(&network, &logger, NV_ONNX_PARSER_VERSION));
}

bool LoadedTensorRt::InitPlugins(nvinfer1::ILogger& logger, std::string* error) const {
  MutexLock lock(&mu_);
  if (plugins_initialized_) return true;
  std::string why;
  if (!plugins_) plugins_ = SharedLibrary::Open(names_.plugins, &why);
  if (!plugins_) {
    *error = "TensorRT's standard plugins (" + names_.plugins + ") are not installed: " + why +
             "; a model that uses them will not parse (install the libnvinfer-plugin" +
             std::to_string(NV_TENSORRT_MAJOR) + " package, or use the SDK's lib/)";
    return false;
  }
  auto init = plugins_->Function<InitPluginsFn>("initLibNvInferPlugins");
  if (init == nullptr) {
    *error = "initLibNvInferPlugins is missing from " + plugins_->Path() + ": a damaged TensorRT install";
    return false;
  }
  if (!init(&logger, "")) {
    *error = "TensorRT's standard plugins (" + plugins_->Path() + ") failed to initialise";
    return false;
  }
  plugins_initialized_ = true;
  return true;
}

bool LoadedTensorRt::LoadStaticPlugin(const std::string& path, std::string* error) const {
  std::string why;
  std::unique_ptr<SharedLibrary> library = SharedLibrary::Open(path, &why);
  if (!library) {
    *error = "--staticPlugins: cannot load \"" + path + "\": " + why;
    return false;
  }
  MutexLock lock(&mu_);
  static_plugins_.push_back(std::move(library));
  return true;
}

}  // namespace trtwatch::trt
