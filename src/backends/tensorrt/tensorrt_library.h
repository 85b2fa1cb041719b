// LoadedTensorRt: TensorRT's libraries (nvinfer, the ONNX parser, and on request
// the standard plugins) loaded at run time through platform/shared_library.h, so
// that a trtwatch compiled with TensorRT starts, runs `doctor`, `--simulate` and
// `serve`, and explains itself where TensorRT is not installed.
//
// The backend never calls TensorRT's exported functions directly: the factory
// functions in TensorRT's headers (createInferBuilder, createParser) are inline
// wrappers around the `*_INTERNAL` entry points resolved here, called with the
// headers' version numbers exactly as the wrappers would.
//
// Threading: Load() may run on any thread; a LoadedTensorRt is immutable after
// Load() except for the plugin library, which InitPlugins() loads once under mu_.
// ForProcess() keeps one instance for the life of the process: TensorRT keeps
// process-wide state (its logger, the plugin registry), so it is never unloaded.
#pragma once

#include <NvInfer.h>
#include <NvOnnxParser.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/tensorrt/library_names.h"
#include "core/mutex.h"
#include "platform/shared_library.h"

namespace trtwatch::trt {

class LoadedTensorRt {
 public:
  // Loads nvinfer and the ONNX parser and resolves their entry points. Null with a
  // message naming the missing library, the version looked for and the fix.
  static std::unique_ptr<LoadedTensorRt> Load(const TensorRtLibraryNames& names, std::string* error);
  // The process's instance for the sonames of the compiled major version, loaded on
  // first use; null (with the reason) when TensorRT is not installed.
  static const LoadedTensorRt* ForProcess(std::string* error);

  int32_t Version() const { return get_version_(); }  // getInferLibVersion()
  std::string NvinferPath() const { return nvinfer_->Path(); }
  std::string ParserPath() const { return parser_->Path(); }

  // createInferBuilder / nvonnxparser::createParser, through the loaded libraries.
  nvinfer1::IBuilder* CreateBuilder(nvinfer1::ILogger& logger) const;
  nvonnxparser::IParser* CreateParser(nvinfer1::INetworkDefinition& network, nvinfer1::ILogger& logger) const;

  // What trtexec does before every build: load libnvinfer_plugin and call
  // initLibNvInferPlugins(&logger, ""), once per process. False with the reason.
  bool InitPlugins(nvinfer1::ILogger& logger, std::string* error) const EXCLUDES(mu_);

  // Loads a plugin library whose static initialisers register its creators
  // (trtexec's --staticPlugins); it stays loaded for the life of this object.
  bool LoadStaticPlugin(const std::string& path, std::string* error) const EXCLUDES(mu_);

 private:
  using CreateBuilderFn = void* (*)(void* logger, int32_t version) noexcept;
  using CreateParserFn = void* (*)(void* network, void* logger, int version) noexcept;
  using VersionFn = int32_t (*)() noexcept;
  using InitPluginsFn = bool (*)(void* logger, char const* lib_namespace);

  LoadedTensorRt() = default;

  TensorRtLibraryNames names_;
  std::unique_ptr<SharedLibrary> nvinfer_;
  std::unique_ptr<SharedLibrary> parser_;
  CreateBuilderFn create_builder_ = nullptr;
  CreateParserFn create_parser_ = nullptr;
  VersionFn get_version_ = nullptr;

  mutable Mutex mu_;
  mutable std::unique_ptr<SharedLibrary> plugins_ GUARDED_BY(mu_);
  mutable bool plugins_initialized_ GUARDED_BY(mu_) = false;
  mutable std::vector<std::unique_ptr<SharedLibrary>> static_plugins_ GUARDED_BY(mu_);
};

}  // namespace trtwatch::trt
