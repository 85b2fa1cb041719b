#include "sinks/jsonl_sink.h"

#include <cerrno>
#include <cstring>

#include "platform/utf8_edges.h"
#include "protocol/event_json.h"

namespace trtwatch {

std::unique_ptr<JsonlSink> JsonlSink::OpenFile(const std::string& path, std::string* error) {
  std::FILE* f = trtwatch::OpenFile(path, "w");  // the platform call, not this function
  if (f == nullptr) {
    *error = "cannot write events to \"" + path + "\": " + std::strerror(errno);
    return nullptr;
  }
  auto sink = std::make_unique<JsonlSink>(f);
  sink->owned_ = true;
  return sink;
}

JsonlSink::~JsonlSink() { Close(); }

void JsonlSink::OnEvent(const Event& event) {
  if (out_ == nullptr) return;
  const std::string line = EventToJson(event) + "\n";
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

void JsonlSink::Close() {
  if (out_ == nullptr) return;
  std::fflush(out_);
  if (owned_) std::fclose(out_);
  out_ = nullptr;
}

}  // namespace trtwatch
