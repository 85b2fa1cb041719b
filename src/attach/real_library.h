// The real libnvinfer.so.N behind the attach library (docs/attach.md): searched in the
// program's library path (LD_LIBRARY_PATH as it is now, then as COMMAND had it:
// TRTWATCH_ORIGINAL_LD_LIBRARY_PATH, which `trtwatch run` sets), then the system's
// folders, then TRTWATCH_NVINFER=PATH. The attach library itself, and any other trtwatch attach
// library (a nested run's), is skipped.
#pragma once

#include <memory>
#include <string>

#include "platform/shared_library.h"

namespace trtwatch::attach {

// The symbol every attach library exports, by which another is recognised.
inline constexpr const char* kAttachMarkSymbol = "trtwatch_attach_library";

struct RealLibrary {
  std::unique_ptr<SharedLibrary> library;  // null when none was found
  std::string error;                       // why, naming the fix
};

// `file_name` is "libnvinfer.so.10"; `own_code` any address inside the attach library.
[[nodiscard]] RealLibrary OpenRealLibrary(const std::string& file_name, const void* own_code);

}  // namespace trtwatch::attach
