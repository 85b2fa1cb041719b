#include "builds/framed_event.h"

#include <charconv>

#include "protocol/sse_frame.h"

namespace trtwatch::builds {

namespace {

// The value of a top-level integer key `key` (given as "\"id\":") of a line
// EventToJson wrote; 0 when absent. Keys inside strings are escaped (\"), so a match
// preceded by '{' or ',' is a key.
int64_t StoredInt(std::string_view line, std::string_view key) {
  for (size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
    if (at == 0 || (line[at - 1] != '{' && line[at - 1] != ',')) continue;
    int64_t value = 0;
    const char* first = line.data() + at + key.size();
    std::from_chars(first, line.data() + line.size(), value);
    return value;
  }
  return 0;
}

}  // namespace

std::string_view StoredEventType(std::string_view line) {
  constexpr std::string_view kKey = "\"type\":\"";
  const size_t start = line.find(kKey);
  if (start == std::string_view::npos) return {};
  const size_t end = line.find('"', start + kKey.size());
  if (end == std::string_view::npos) return {};
  return line.substr(start + kKey.size(), end - start - kKey.size());
}

bool FrameStoredEvent(uint64_t seq, std::string_view line, FramedEvent* item) {
  const std::string_view type = StoredEventType(line);
  if (type.empty()) return false;
  item->seq = seq;
  item->step = type == "step";
  item->phase_id = item->step ? StoredInt(line, "\"id\":") : 0;
  item->frame = std::make_shared<const std::string>(SseFrame(seq, type, line));
  return true;
}

}  // namespace trtwatch::builds
