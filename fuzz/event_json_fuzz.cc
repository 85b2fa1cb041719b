// EventFromJson (replay, the service's worker stream): any line is parsed or refused
// with a reason; an accepted event written back out parses again to the same JSON.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "protocol/event_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  trtwatch::Event event;
  std::string error;
  if (!trtwatch::EventFromJson(line, &event, &error)) {
    FUZZ_CHECK(!error.empty());
    return 0;
  }
  const std::string once = trtwatch::EventToJson(event);
  trtwatch::Event again;
  FUZZ_CHECK(trtwatch::EventFromJson(once, &again, &error));
  FUZZ_CHECK(trtwatch::EventToJson(again) == once);
  return 0;
}
