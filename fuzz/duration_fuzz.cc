// ParseDuration (--timeout, the service's "timeout"): accepted durations are positive
// and finite; a refusal always says why.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "runner/duration.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  double seconds = -1;
  std::string error;
  if (trtwatch::ParseDuration(text, &seconds, &error)) {
    FUZZ_CHECK(std::isfinite(seconds) && seconds > 0);
  } else {
    FUZZ_CHECK(!error.empty());
  }
  return 0;
}
