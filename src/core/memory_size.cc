#include "core/memory_size.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace trtwatch {

MemorySize ParseMemorySize(std::string_view text, std::string_view flag) {
  const std::string hint = " (a size such as 4096, 512M or 4G; no unit means MiB)";
  if (text.empty()) return {std::nullopt, std::string(flag) + ": empty size" + hint};
  double scale = 1024.0 * 1024.0;
  std::string_view number = text;
  switch (text.back()) {
    case 'B': case 'b': scale = 1; number.remove_suffix(1); break;
    case 'K': case 'k': scale = 1024.0; number.remove_suffix(1); break;
    case 'M': case 'm': scale = 1024.0 * 1024.0; number.remove_suffix(1); break;
    case 'G': case 'g': scale = 1024.0 * 1024.0 * 1024.0; number.remove_suffix(1); break;
    default: break;
  }
  double value = 0;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || ptr != number.data() + number.size() || !(value > 0) ||
      !std::isfinite(value) || value * scale > 1.8e19) {
    return {std::nullopt, std::string(flag) + ": \"" + std::string(text) + "\" is not a positive size" + hint};
  }
  return {static_cast<uint64_t>(value * scale), ""};
}

}  // namespace trtwatch
