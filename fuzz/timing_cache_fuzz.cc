// ParseTimingCache (a simulated build's --timing-cache file, bytes from disk): any text
// is a cache or a refusal that says why; an accepted cache serializes to text that
// parses back to the same cache.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "backends/simulated/timing_cache.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto cache = trtwatch::sim::ParseTimingCache(text);
  if (!cache.ok()) {
    FUZZ_CHECK(!cache.error().empty());
    return 0;
  }
  const auto again = trtwatch::sim::ParseTimingCache(trtwatch::sim::SerializeTimingCache(*cache));
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->maker == cache->maker && again->entries == cache->entries);
  return 0;
}
