#include "attach/builder_hook.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "attach/abi/nvinfer_abi.h"
#include "attach/abi/vtable_slot.h"
#include "attach/chained_monitor.h"
#include "attach/watched_build.h"
#include "core/mutex.h"

namespace trtwatch::attach {

namespace {

using nvinfer1::IBuilderConfig;
using nvinfer1::IHostMemory;
using nvinfer1::INetworkDefinition;
using nvinfer1::apiv::VBuilder;

// A copy of a builder implementation's virtual table with the build slots replaced:
// the two words before slot 0 (offset to top, type info) and every declared slot.
struct PatchedTable {
  void* const* original = nullptr;
  std::vector<void*> entries;
  void* const* vptr() const { return entries.data() + 2; }
};

// Every table made, kept for the life of the process (a builder may outlive anything).
struct Tables {
  Mutex mu;
  std::vector<std::unique_ptr<PatchedTable>> made GUARDED_BY(mu);
};
Tables& AllTables() {
  static auto* tables = new Tables();
  return *tables;
}

void* const* VptrOf(const void* object) { return *static_cast<void* const* const*>(object); }

// TensorRT's own function in `slot` of the object's original table.
void* OriginalSlot(const VBuilder* self, int slot) {
  Tables& tables = AllTables();
  MutexLock lock(&tables.mu);
  const void* const* vptr = VptrOf(self);
  for (const auto& table : tables.made) {
    if (table->vptr() == vptr) return table->original[slot];
  }
  return VptrOf(self)[slot];  // not patched (cannot happen): its own slot
}

std::atomic<int32_t> g_library_version{0};
// Depth of watched build calls on this thread: a build entry point that calls another
// (WithKernelText calling buildSerializedNetwork) is one build.
thread_local int t_depth = 0;

bool Built(bool result) { return result; }
bool Built(const void* result) { return result != nullptr; }

// Runs `original` with the config's monitor chained for the call's duration.
template <class Call>
auto WatchCall(const char* name, IBuilderConfig& config, Call&& original) -> decltype(original()) {
  if (t_depth > 0) return original();
  std::unique_ptr<WatchedBuild> watched;
  try {
    watched = WatchedBuild::Begin(name, g_library_version.load());
  } catch (...) {
    watched.reset();  // out of memory, say: the build runs unwatched
  }
  if (!watched) return original();
  nvinfer1::IProgressMonitor* own = config.getProgressMonitor();
  ChainedMonitor chained(watched->monitor(), own);
  config.setProgressMonitor(&chained);
  ++t_depth;
  auto result = original();
  --t_depth;
  config.setProgressMonitor(own);
  watched->Returned(Built(result));
  return result;
}

template <class Function>
Function Original(const VBuilder* self, int slot) {
  return reinterpret_cast<Function>(OriginalSlot(self, slot));
}

IHostMemory* SerializedNetwork(VBuilder* self, INetworkDefinition& network, IBuilderConfig& config) noexcept {
  auto* original = Original<decltype(&SerializedNetwork)>(self, SlotOf(&VBuilder::buildSerializedNetwork));
  return WatchCall("buildSerializedNetwork", config, [&] { return original(self, network, config); });
}
nvinfer1::ICudaEngine* EngineWithConfig(VBuilder* self, INetworkDefinition& network, IBuilderConfig& config) noexcept {
  auto* original = Original<decltype(&EngineWithConfig)>(self, SlotOf(&VBuilder::buildEngineWithConfig));
  return WatchCall("buildEngineWithConfig", config, [&] { return original(self, network, config); });
}
bool SerializedNetworkToStream(VBuilder* self, INetworkDefinition& network, IBuilderConfig& config,
                               nvinfer1::IStreamWriter& writer) noexcept {
  auto* original =
      Original<decltype(&SerializedNetworkToStream)>(self, SlotOf(&VBuilder::buildSerializedNetworkToStream));
  return WatchCall("buildSerializedNetworkToStream", config, [&] { return original(self, network, config, writer); });
}
IHostMemory* SerializedNetworkWithKernelText(VBuilder* self, INetworkDefinition& network, IBuilderConfig& config,
                                             IHostMemory*& kernel_text) noexcept {
  auto* original = Original<decltype(&SerializedNetworkWithKernelText)>(
      self, SlotOf(&VBuilder::buildSerializedNetworkWithKernelText));
  return WatchCall("buildSerializedNetworkWithKernelText", config,
                   [&] { return original(self, network, config, kernel_text); });
}

// The table for objects whose table is `original`, made on first use.
const PatchedTable* PatchedFor(void* const* original, int32_t library_version) {
  Tables& tables = AllTables();
  MutexLock lock(&tables.mu);
  for (const auto& table : tables.made) {
    if (table->original == original) return table.get();
    if (table->vptr() == original) return nullptr;  // already patched
  }
  auto table = std::make_unique<PatchedTable>();
  table->original = original;
  // Only the slots this library has: reading past its table's end would read past
  // anything TensorRT promises.
  const int slots = nvinfer1::BuilderSlotsOf(library_version);
  table->entries.assign(original - 2, original + slots);
  const auto set = [&](int slot, auto function) {
    if (slot < slots) table->entries[2 + slot] = reinterpret_cast<void*>(function);
  };
  set(SlotOf(&VBuilder::buildSerializedNetwork), &SerializedNetwork);
  set(SlotOf(&VBuilder::buildEngineWithConfig), &EngineWithConfig);
  set(SlotOf(&VBuilder::buildSerializedNetworkToStream), &SerializedNetworkToStream);
  set(SlotOf(&VBuilder::buildSerializedNetworkWithKernelText), &SerializedNetworkWithKernelText);
  tables.made.push_back(std::move(table));
  return tables.made.back().get();
}

// Reads the protected implementation pointer the way a derived class may.
struct BuilderAccess : nvinfer1::IBuilder {
  static VBuilder* Impl(nvinfer1::IBuilder* builder) { return builder->*(&BuilderAccess::mImpl); }
};

}  // namespace

void HookBuilder(void* builder, int32_t caller_version, int32_t library_version) noexcept {
  if (builder == nullptr) return;
  if (caller_version > nvinfer1::kDeclaredThroughVersion) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) {
      std::fprintf(stderr,
                   "trtwatch: the program was compiled with TensorRT %d headers, newer than this attach library "
                   "knows (%d); its builds go on unwatched\n",
                   caller_version, nvinfer1::kDeclaredThroughVersion);
    }
    return;
  }
  g_library_version = library_version;
  VBuilder* impl = BuilderAccess::Impl(static_cast<nvinfer1::IBuilder*>(builder));
  if (impl == nullptr) return;
  try {
    if (const PatchedTable* table = PatchedFor(VptrOf(impl), library_version); table != nullptr) {
      *reinterpret_cast<void* const**>(impl) = table->vptr();
    }
  } catch (...) {
    // Out of memory: the builder stays unwatched.
  }
}

}  // namespace trtwatch::attach
