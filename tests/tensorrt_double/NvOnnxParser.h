// TEST DOUBLE, written from TensorRT's documented signatures: not NVIDIA's header.
// The ONNX parser calls trtwatch's backend makes.
#pragma once

#include "NvInfer.h"

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

IParser* createParser(nvinfer1::INetworkDefinition& network, nvinfer1::ILogger& logger) noexcept;

}  // namespace nvonnxparser
