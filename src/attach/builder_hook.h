// The attach library's one interception (docs/attach.md): a builder fresh from the real
// createInferBuilder_INTERNAL gets its implementation's build calls watched. Its
// `apiv::VBuilder` object is given a copy of its virtual table in which the build entry
// points of the version (buildSerializedNetwork, buildEngineWithConfig,
// buildSerializedNetworkToStream, buildSerializedNetworkWithKernelText) run through
// WatchedBuild with a ChainedMonitor on the call's config, restored when the call
// returns; every other slot, the destructor's included, is TensorRT's own.
// Compiled per TensorRT major version.
#pragma once

#include <cstdint>

namespace trtwatch::attach {

// `builder` is what createInferBuilder_INTERNAL returned (an IBuilder*); `caller_version`
// the headers' version the program passed. A caller compiled with headers newer than
// the attach library's declarations is left alone (said once): it may call slots this
// library does not know.
void HookBuilder(void* builder, int32_t caller_version, int32_t library_version) noexcept;

}  // namespace trtwatch::attach
