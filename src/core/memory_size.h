// Sizes as users write them on the command line: 4096 (MiB), 512K, 4G, 100B, 1.5G.
// Shared by every flag that takes one (TensorRT's --memPoolSize and --workspace, the
// engine cache's --engine-cache-max-size, the service's --max-upload-size). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trtwatch {

struct MemorySize {
  std::optional<uint64_t> bytes;  // set on success
  std::string error;              // otherwise: names the flag and shows what a size looks like
};

// `flag` names the option in the error. A number without a unit is MiB (trtexec's rule).
[[nodiscard]] MemorySize ParseMemorySize(std::string_view text, std::string_view flag);

}  // namespace trtwatch
