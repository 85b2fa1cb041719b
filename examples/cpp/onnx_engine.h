// The TensorRT build code a project already has: ONNX in, serialized engine out. The
// only line trtwatch adds is the one marked below.
#pragma once

#include <NvInfer.h>
#include <NvOnnxParser.h>

#include <cstdint>
#include <fstream>
#include <filesystem>
#include <memory>
#include <string>

// Parses `onnx` and builds an engine with `monitor` attached; null when the parse or
// the build fails (the logger has the reason) or the build was cancelled.
inline std::unique_ptr<nvinfer1::IHostMemory> BuildSerializedEngine(const std::string& onnx,
                                                                     nvinfer1::ILogger& logger,
                                                                     nvinfer1::IProgressMonitor& monitor) {
  std::unique_ptr<nvinfer1::IBuilder> builder(nvinfer1::createInferBuilder(logger));
  if (!builder) return nullptr;
#if NV_TENSORRT_MAJOR >= 10
  const uint32_t flags = 0;  // explicit batch is the only mode
#else
  const uint32_t flags = 1U << static_cast<uint32_t>(nvinfer1::NetworkDefinitionCreationFlag::kEXPLICIT_BATCH);
#endif
  std::unique_ptr<nvinfer1::INetworkDefinition> network(builder->createNetworkV2(flags));
  std::unique_ptr<nvonnxparser::IParser> parser(nvonnxparser::createParser(*network, logger));
  if (!parser->parseFromFile(onnx.c_str(), static_cast<int>(nvinfer1::ILogger::Severity::kWARNING))) {
    for (int i = 0; i < parser->getNbErrors(); ++i) {
      logger.log(nvinfer1::ILogger::Severity::kERROR, parser->getError(i)->desc());
    }
    return nullptr;
  }
  std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
  config->setProgressMonitor(&monitor);  // <- trtwatch
  return std::unique_ptr<nvinfer1::IHostMemory>(builder->buildSerializedNetwork(*network, *config));
}

// Writes the engine beside `path` and renames it into place: never a partial engine.
inline bool SaveEngine(const nvinfer1::IHostMemory& plan, const std::string& path) {
  const std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(static_cast<const char*>(plan.data()), static_cast<std::streamsize>(plan.size()));
    if (!out.flush()) return false;
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  return !error;
}
