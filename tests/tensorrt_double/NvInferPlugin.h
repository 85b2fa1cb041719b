// TEST DOUBLE, written from TensorRT's documented signatures: not NVIDIA's header.
// libnvinfer_plugin's entry point: registers TensorRT's standard plugins.
#pragma once

#include "NvInfer.h"

extern "C" {
bool initLibNvInferPlugins(void* logger, char const* libNamespace);
}
