// JsonlSink: the event stream as JSON lines, to stdout (--progress json) or a file
// (--events FILE). Each line is flushed as it is written, so that a reader following
// the stream (the service, `tail -f`) sees events as they happen.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "core/sink.h"

namespace trtwatch {

class JsonlSink final : public Sink {
 public:
  // Writes to `out`, which the caller keeps open.
  explicit JsonlSink(std::FILE* out) : out_(out) {}
  // Opens `path` for writing. Returns nullptr and sets `*error` if it cannot.
  static std::unique_ptr<JsonlSink> OpenFile(const std::string& path, std::string* error);
  ~JsonlSink() override;

  void OnEvent(const Event& event) override;
  void Close() override;

 private:
  std::FILE* out_;
  bool owned_ = false;
};

}  // namespace trtwatch
