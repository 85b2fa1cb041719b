// TraceSink: the build's phase timeline as a Chrome Trace Event file (--trace FILE.json),
// for Perfetto (ui.perfetto.dev) and chrome://tracing.
//
// The document is {"traceEvents": [...], "displayTimeUnit": "ms"}: one "X" complete
// event per phase instance (ts and dur in microseconds since the build started), "i"
// instant events for cancel requests and stall warnings, and "M" metadata naming the
// process and its lanes. Events carry no OS thread ids, so TraceLanes assigns lanes
// (tids) such that complete events nest properly per tid, as the format requires: a
// phase goes on its parent's lane while no sibling occupies it, else on the first
// idle lane, else on a fresh one.
//
// Threading: a TraceBuilder belongs to one thread. TraceSink's OnEvent and Close run on
// its delivery thread; error() may be read after delivery ended (Dispatcher::Join).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/sink.h"

namespace trtwatch {

// Assigns lanes to phase instances so that intervals on one lane nest.
class TraceLanes {
 public:
  // The lane (0-based) of a phase starting now, under `parent` (kNoPhase: none).
  size_t Start(int64_t id, int64_t parent);
  // The phase ended. Returns the ids of phases above it on its lane (descendants that
  // have not finished yet, innermost first): to keep the lane nested they end here too.
  // Empty in a well-formed stream, where children finish before their parent.
  std::vector<int64_t> Finish(int64_t id);
  size_t lane_count() const { return lanes_.size(); }

 private:
  std::vector<std::vector<int64_t>> lanes_;  // per lane: the open phases, outermost first
  std::map<int64_t, size_t> lane_of_;        // open phase id -> lane
};

// The trace document, built from the event stream.
class TraceBuilder {
 public:
  void Apply(const Event& event);
  // The complete document; phases still open end at the latest time seen.
  std::string Json() const;

 private:
  struct Open {
    std::string name;
    double start = 0;
    size_t lane = 0;
    int32_t total = 0;
    int32_t done = 0;
  };
  struct Span {
    std::string name;
    double start = 0;
    double end = 0;
    size_t lane = 0;
    int32_t completed = 0;
    int32_t total = 0;
    bool early = false;
    bool cut = false;  // ended with an ancestor that finished first
  };
  struct Instant {
    std::string name;
    double t = 0;
    std::string detail;
  };
  void End(int64_t id, double t, bool early, bool cut);

  TraceLanes lanes_;
  std::map<int64_t, Open> open_;
  std::vector<Span> spans_;
  std::vector<Instant> instants_;
  std::string title_ = "trtwatch build";
  double last_t_ = 0;
  bool finished_ = false;
  std::string status_;
  double elapsed_ = 0;
};

class TraceSink final : public Sink {
 public:
  // Checks that `path` can be written (creates and removes a probe file beside it), so
  // that a bad path fails before the build starts. nullptr and `*error` otherwise.
  static std::unique_ptr<TraceSink> Open(const std::string& path, std::string* error);

  void OnEvent(const Event& event) override { builder_.Apply(event); }
  // Writes the document to a temporary file beside `path` and renames it into place:
  // readers never see a partial trace.
  void Close() override;
  // Why the trace could not be written; empty when it was (or Close did not run).
  const std::string& error() const { return error_; }

 private:
  explicit TraceSink(std::string path) : path_(std::move(path)) {}

  const std::string path_;
  TraceBuilder builder_;
  bool closed_ = false;
  std::string error_;
};

}  // namespace trtwatch
