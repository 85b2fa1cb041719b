// The attach library's exported entry points: libnvinfer.so.N's thirteen C functions,
// each forwarded unchanged to the real library (attach/real_library.h), found on first
// use; createInferBuilder_INTERNAL also hooks the builder it returns
// (attach/builder_hook.h). Nothing runs at load time: a program that never calls
// TensorRT pays for nothing but the mapping. Compiled per TensorRT major version.
#include <atomic>
#include <cstdio>
#include <string>

#include "attach/abi/nvinfer_abi.h"
#include "attach/builder_hook.h"
#include "attach/real_library.h"

#define TRTWATCH_EXPORT extern "C" __attribute__((visibility("default")))

// The mark by which a trtwatch attach library is told from the real one.
TRTWATCH_EXPORT const int trtwatch_attach_library = TRTWATCH_ATTACH_MAJOR;

namespace trtwatch::attach {
namespace {

const RealLibrary& Real() {
  static const RealLibrary real = [] {
    RealLibrary found = OpenRealLibrary("libnvinfer.so." + std::to_string(TRTWATCH_ATTACH_MAJOR),
                                        reinterpret_cast<const void*>(&Real));
    if (!found.library) std::fprintf(stderr, "trtwatch: %s\n", found.error.c_str());
    return found;
  }();
  return real;
}

template <class Function>
Function RealFunction(const char* name) {
  const RealLibrary& real = Real();
  return real.library ? real.library->Function<Function>(name) : nullptr;
}

}  // namespace
}  // namespace trtwatch::attach

// One forwarding entry point: the real function, looked up once, or `fallback` when the
// real library is missing.
#define TRTWATCH_FORWARD(ret, name, params, args, fallback)                                \
  TRTWATCH_EXPORT ret name params noexcept {                                               \
    static const auto real = trtwatch::attach::RealFunction<ret(*) params noexcept>(#name); \
    return real != nullptr ? real args : fallback;                                          \
  }

TRTWATCH_FORWARD(void*, createInferRuntime_INTERNAL, (void* logger, int32_t version), (logger, version), nullptr)
TRTWATCH_FORWARD(void*, createInferRefitter_INTERNAL, (void* engine, void* logger, int32_t version),
                 (engine, logger, version), nullptr)
TRTWATCH_FORWARD(nvinfer1::IPluginRegistry*, getBuilderPluginRegistry, (nvinfer1::EngineCapability capability),
                 (capability), nullptr)
TRTWATCH_FORWARD(bool, setInternalLibraryPath, (char const* path), (path), false)
TRTWATCH_FORWARD(void*, getBuilderSafePluginRegistry, (nvinfer1::EngineCapability capability), (capability), nullptr)
TRTWATCH_FORWARD(nvinfer1::IPluginRegistry*, getPluginRegistry, (), (), nullptr)
TRTWATCH_FORWARD(nvinfer1::ILogger*, getLogger, (), (), nullptr)
TRTWATCH_FORWARD(int32_t, getInferLibVersion, (), (), 0)
TRTWATCH_FORWARD(int32_t, getInferLibMajorVersion, (), (), 0)
TRTWATCH_FORWARD(int32_t, getInferLibMinorVersion, (), (), 0)
TRTWATCH_FORWARD(int32_t, getInferLibPatchVersion, (), (), 0)
TRTWATCH_FORWARD(int32_t, getInferLibBuildVersion, (), (), 0)

TRTWATCH_EXPORT void* createInferBuilder_INTERNAL(void* logger, int32_t version) noexcept {
  static const auto real = trtwatch::attach::RealFunction<void* (*)(void*, int32_t) noexcept>(__func__);
  if (real == nullptr) return nullptr;
  void* builder = real(logger, version);
  trtwatch::attach::HookBuilder(builder, version, getInferLibVersion());
  return builder;
}
