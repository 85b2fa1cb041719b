// ParseProfile (simulator profiles from --simulate FILE): any JSON text is a profile
// or a refusal that names the field; a small accepted profile also becomes a plan.
#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/simulated/plan.h"
#include "backends/simulated/profile.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto profile = trtwatch::sim::ParseProfile(text, &error);
  if (!profile) {
    FUZZ_CHECK(!error.empty());
    return 0;
  }
  // Plans grow with step counts (a profile may legitimately ask for millions of
  // phases); planning is exercised on inputs whose text is small.
  if (size < 512) trtwatch::sim::MakePlan(*profile, /*seed=*/size);
  return 0;
}
