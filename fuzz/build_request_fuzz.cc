// ParseBuildRequest (POST /builds bodies): any body is accepted or refused with a
// reason; an accepted one becomes a worker command line without a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "builds/build_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  // Roots that do not exist: real-model requests are refused after their syntax is
  // checked, simulated ones go all the way.
  static const trtwatch::builds::RequestPaths paths = {{"/nonexistent-trtwatch-fuzz-models"},
                                                        "/nonexistent-trtwatch-fuzz-data"};
  const trtwatch::Result<trtwatch::builds::BuildRequest> request = trtwatch::builds::ParseBuildRequest(body, paths);
  if (!request.ok()) {
    FUZZ_CHECK(!request.error().empty());
    return 0;
  }
  FUZZ_CHECK(!request->json.empty());
  const auto args = trtwatch::builds::WorkerArguments(*request, "/tmp/fuzz.engine");
  FUZZ_CHECK(!args.empty());
  return 0;
}
