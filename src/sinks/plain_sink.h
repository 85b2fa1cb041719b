// PlainSink: progress as plain lines for logs and pipes (--progress plain). No escape
// codes, nothing truncated: one line per phase start and finish, a progress line per
// phase at most every `progress_every` seconds, log lines, stall and cancel notices,
// and the summary at the end.
#pragma once

#include <cstdio>
#include <map>
#include <string>

#include "core/phase_tree.h"
#include "core/sink.h"

namespace trtwatch {

class PlainSink final : public Sink {
 public:
  explicit PlainSink(std::FILE* out, double progress_every = 5.0)
      : out_(out), progress_every_(progress_every) {}

  void OnEvent(const Event& event) override;
  void Close() override { std::fflush(out_); }

 private:
  void Line(double t, int depth, const std::string& text);

  std::FILE* const out_;
  const double progress_every_;
  PhaseTree tree_;
  std::string last_estimate_;  // the estimate line printed last
  std::map<int64_t, double> last_progress_;  // phase id -> t of its last progress line
};

}  // namespace trtwatch
