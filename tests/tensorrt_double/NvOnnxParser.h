// TEST DOUBLE, written from TensorRT's documented signatures: not NVIDIA's header.
// The ONNX parser calls trtwatch's backend makes.
#pragma once

#include "NvInfer.h"

#define NV_ONNX_PARSER_MAJOR 0
#define NV_ONNX_PARSER_MINOR 1
#define NV_ONNX_PARSER_PATCH 0
static constexpr int32_t NV_ONNX_PARSER_VERSION =
    ((NV_ONNX_PARSER_MAJOR * 10000) + (NV_ONNX_PARSER_MINOR * 100) + NV_ONNX_PARSER_PATCH);

namespace nvonnxparser {

class IParserError {
 public:
  virtual char const* desc() const = 0;

 protected:
  virtual ~IParserError() = default;
};

class IParser {
 public:
  virtual bool parseFromFile(char const* onnxModelFile, int verbosity) noexcept = 0;
  virtual int getNbErrors() const noexcept = 0;
  virtual IParserError const* getError(int index) const noexcept = 0;
  virtual ~IParser() noexcept = default;
};

}  // namespace nvonnxparser

// As in TensorRT: C entry points in libnvonnxparser, wrapped inline.
extern "C" void* createNvOnnxParser_INTERNAL(void* network, void* logger, int version) noexcept;
extern "C" int getNvOnnxParserVersion() noexcept;

namespace nvonnxparser {
namespace {
inline IParser* createParser(nvinfer1::INetworkDefinition& network, nvinfer1::ILogger& logger) noexcept {
  return static_cast<IParser*>(createNvOnnxParser_INTERNAL(&network, &logger, NV_ONNX_PARSER_VERSION));
}
}  // namespace
}  // namespace nvonnxparser
