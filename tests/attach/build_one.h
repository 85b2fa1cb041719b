// One engine build as a program makes it, for the attach test programs
// (engine_builder.cc, python_bindings.cc): a builder from createInferBuilder_INTERNAL,
// a network, a config with the program's own monitor if it has one, a build call.
// Built against the project's ABI declarations (src/attach/abi/nvinfer_abi.h).
#pragma once

#include <atomic>
#include <cstdio>
#include <string>

#include "attach/abi/nvinfer_abi.h"

namespace trtwatch_test {

using CreateBuilder = void* (*)(void*, int32_t);

class CountingLogger : public nvinfer1::ILogger {
 public:
#if TRTWATCH_ATTACH_MAJOR >= 11
  nvinfer1::InterfaceInfo getInterfaceInfo() const noexcept override { return {"ILogger", 1, 0}; }
#endif
  void log(nvinfer1::Severity, char const*) noexcept override { messages.fetch_add(1); }
  std::atomic<int> messages{0};
};

// The program's own monitor: counts what it gets, and refuses from step `cancel_at` on.
class OwnMonitor : public nvinfer1::IProgressMonitor {
 public:
  explicit OwnMonitor(int cancel_at) : cancel_at_(cancel_at) {}
  void phaseStart(char const*, char const*, int32_t) noexcept override { starts.fetch_add(1); }
  bool stepComplete(char const*, int32_t step) noexcept override {
    steps.fetch_add(1);
    return cancel_at_ < 0 || step < cancel_at_;
  }
  void phaseFinish(char const*) noexcept override { finishes.fetch_add(1); }
  std::atomic<int> starts{0}, steps{0}, finishes{0};

 private:
  const int cancel_at_;
};

inline bool BuildOne(CreateBuilder create, CountingLogger& logger, OwnMonitor* own, const std::string& call) {
  auto* builder = static_cast<nvinfer1::IBuilder*>(create(&logger, nvinfer1::kDeclaredThroughVersion));
  if (builder == nullptr) return false;
  nvinfer1::INetworkDefinition* network = builder->createNetworkV2(0);
  nvinfer1::IBuilderConfig* config = builder->createBuilderConfig();
  if (own != nullptr) config->setProgressMonitor(own);
  bool built = false;
  if (call == "engine") {
    built = builder->buildEngineWithConfig(*network, *config) != nullptr;
  } else {
    nvinfer1::IHostMemory* engine = builder->buildSerializedNetwork(*network, *config);
    built = engine != nullptr && engine->size() > 0;
    delete engine;
  }
  // The program's monitor is its own again after the call.
  if (config->getProgressMonitor() != own) {
    std::fprintf(stderr, "engine_builder: the config's monitor was not restored\n");
    built = false;
  }
  delete config;
  delete network;
  delete builder;
  return built;
}

}  // namespace trtwatch_test
