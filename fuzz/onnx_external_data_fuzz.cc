// The ONNX external-data scan (keys/onnx_external_data.h) over any bytes: a model's
// file is untrusted. Every input ends in a list of locations that all pass
// CheckLocation, or an error naming the model; never a crash, a hang or a read past
// the input.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_check.h"
#include "keys/onnx_external_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream model(std::string(reinterpret_cast<const char*>(data), size));
  const trtwatch::keys::ExternalDataOutcome found = trtwatch::keys::FindExternalDataIn(model, size, "fuzz.onnx");
  if (!found.locations) {
    FUZZ_CHECK(found.error.find("fuzz.onnx") != std::string::npos);
    return 0;
  }
  for (const std::string& location : *found.locations) FUZZ_CHECK(trtwatch::keys::CheckLocation(location).empty());
  return 0;
}
