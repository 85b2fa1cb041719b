// What a BuildOptions asks of TensorRT's builder, apart from running it: the network's
// creation flags, the builder configuration (precision and other flags, memory pools,
// levels, tactic sources, DLA, plugins) and one input's range in an optimization
// profile. Compiled only with TensorRT's headers (the TensorRT backend's sources).
//
// Threading: functions of their arguments; the TensorRT objects are the caller's.
#pragma once

#include <NvInfer.h>

#include <string>

#include "backends/tensorrt/build_options.h"

namespace trtwatch::trt {

nvinfer1::NetworkDefinitionCreationFlags NetworkFlags(const BuildOptions& options);

// The builder flags and settings `o` asks for (everything but shapes and the timing
// cache). False with the reason in `*error` when TensorRT refuses one.
bool ConfigureBuilder(const BuildOptions& o, int compute_capability, nvinfer1::IBuilderConfig& config,
                      std::string* error);

// One input's range in a profile: dimensions, or for a shape tensor its values. False
// when TensorRT refuses it or a value does not fit.
bool SetProfileRange(nvinfer1::IOptimizationProfile& profile, const ShapeRange& range, bool shape_tensor);

}  // namespace trtwatch::trt
