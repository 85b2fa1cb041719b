#include "protocol/sse_frame.h"

namespace trtwatch {

std::string SseFrame(uint64_t seq, std::string_view type, std::string_view data) {
  std::string frame;
  frame.reserve(data.size() + type.size() + 40);
  frame += "id: ";
  frame += std::to_string(seq);
  frame += "\nevent: ";
  frame += type;
  frame += '\n';
  if (type == "build_finish") {
    frame += "retry: ";
    frame += std::to_string(kSseRetryAfterEndMs);
    frame += '\n';
  }
  // Each line of the payload is its own data field; clients join them with '\n'.
  size_t start = 0;
  while (true) {
    const size_t end = data.find('\n', start);
    frame += "data: ";
    frame += data.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    frame += '\n';
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  frame += '\n';
  return frame;
}

std::string SseRetry(int milliseconds) { return "retry: " + std::to_string(milliseconds) + "\n\n"; }

}  // namespace trtwatch
