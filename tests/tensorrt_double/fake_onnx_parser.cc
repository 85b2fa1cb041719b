// Fake ONNX parser (libnvonnxparser.so.N of the TEST DOUBLE; not NVIDIA code): "parses"
// any readable file into the network the Script describes.
#include <NvOnnxParser.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fake_tensorrt.h"

namespace fake_trt {
namespace {

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
  FakeParser(nvinfer1::INetworkDefinition& network, nvinfer1::ILogger& logger) : network_(network), logger_(logger) {}
  bool parseFromFile(char const* file, int verbosity) noexcept override {
    GetRecord().parsed_file = file;
    GetRecord().parse_verbosity = verbosity;
    if (std::FILE* f = std::fopen(file, "rb")) {
      std::fclose(f);
    } else {
      errors_.emplace_back(std::string("failed to open file ") + file);
      return false;
    }
    if (GetScript().parse_fails) {
      logger_.log(nvinfer1::ILogger::Severity::kERROR, "fake parser: node 3 (FancyOp) is not supported");
      errors_.emplace_back("In node 3 with name: /fancy and operator: FancyOp (parseNode): UNSUPPORTED_NODE");
      return false;
    }
    PopulateNetwork(network_);
    return true;
  }
  int getNbErrors() const noexcept override { return static_cast<int>(errors_.size()); }
  nvonnxparser::IParserError const* getError(int index) const noexcept override {
    return index >= 0 && index < getNbErrors() ? &errors_[static_cast<size_t>(index)] : nullptr;
  }

 private:
  nvinfer1::INetworkDefinition& network_;
  nvinfer1::ILogger& logger_;
  std::vector<FakeParserError> errors_;
};

}  // namespace
}  // namespace fake_trt

extern "C" void* createNvOnnxParser_INTERNAL(void* network, void* logger, int version) noexcept {
  fake_trt::GetRecord().parser_version_arg = version;
  return static_cast<nvonnxparser::IParser*>(new fake_trt::FakeParser(*static_cast<nvinfer1::INetworkDefinition*>(network),
                                                                      *static_cast<nvinfer1::ILogger*>(logger)));
}

extern "C" int getNvOnnxParserVersion() noexcept { return NV_ONNX_PARSER_VERSION; }
