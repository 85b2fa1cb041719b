// Following a worker's streams: the pure steps between the bytes a local worker writes
// and what the manager relays, stores and records. Its stdout is cut into protocol
// lines (bounded), each event checked and rewritten where the service knows better
// (the build's id, the reason of a cancel it carried), its engine-cache answer and
// estimate folded into the record; its stderr keeps a bounded tail for the error text.
// A stream that ends early is closed with synthesised events, and a worker that died
// without finishing gets an error that says how.
//
// The readers of builds that run elsewhere are fed from the stored log by
// RemoteFollowers (builds/remote_followers.h).
//
// Threading: pure functions and a value type; no locks, no I/O but warnings on stderr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "builds/build_record.h"
#include "core/event.h"

namespace trtwatch {
class PhaseTree;
struct TreeSnapshot;
struct WorkerExit;
}  // namespace trtwatch

namespace trtwatch::builds {

// A worker's stdout cut into lines. No protocol line is longer than kMaxLine: a longer
// one is dropped (counted), never kept growing.
class LineSplitter {
 public:
  static constexpr size_t kMaxLine = 1u << 20;
  // Calls `line` for each whole line in `data` (without its '\n'); keeps the rest.
  template <typename OnLine>
  void Feed(std::string_view data, OnLine&& line);
  uint64_t dropped() const { return dropped_; }

 private:
  std::string partial_;  // an incomplete line
  uint64_t dropped_ = 0;
};

// Keeps the last kStderrTail bytes of a worker's stderr, cut on a character boundary.
inline constexpr size_t kStderrTail = 4096;
void KeepStderrTail(std::string* tail);

// The protocol's word for a record's end, and back (failed, interrupted -> failed).
BuildState StateFromStatus(BuildStatus status);
BuildStatus StatusFromState(BuildState state);

// The record's phase snapshot (its "phase" field) of `tree`, as JSON text.
std::string SnapshotJson(const PhaseTree& tree);

// Rewrites a worker's event as the service relays it: texts cut to kMaxWorkerText, the
// service's id in build_start, and the cancel the service carried (as SIGTERM) told with
// its reason and message. True when the event changed (its line must be written anew).
bool AdjustWorkerEvent(const BuildRecord& record, Event* event);

// Folds a worker's engine-cache answer (build_start, build_finish) into the record,
// checked; a refused one is a warning and leaves the record as it was.
void FoldCacheUse(const Event& event, BuildRecord* record);
// Keeps the name of the fleet timing cache a worker's build_start says it was given
// (its "timing_cache" fact: a file of `fleet_dir`, named by the cache rule) in the
// record; any other cache, or a name that breaks the rule, is not the fleet's.
void FoldFleetTimingCache(const Event& event, const std::string& fleet_dir, BuildRecord* record);
// Keeps a worker's estimate in the record, checked (finite, ordered, not negative);
// false when refused.
bool FoldEstimate(const Event& event, BuildRecord* record);

// The events that close a stream the worker left unfinished: a phase_finish (early) for
// each open phase, children first, then build_finish with `state` and `error`; seqs
// follow `last_seq`, all at `t`.
std::vector<Event> ClosingEvents(const TreeSnapshot& snapshot, uint64_t last_seq, double t, BuildState state,
                                 const std::string& error);

// How a build whose worker ended without a build_finish ended, and why.
struct WorkerDeath {
  BuildState state = BuildState::kFailed;
  std::string error;
};
// `record`: its cancel (if the service asked for one); `forced_kill`: killed after the
// grace; `stderr_text`: the tail of its stderr, quoted unless it was cancelled.
WorkerDeath JudgeWorkerDeath(const BuildRecord& record, const WorkerExit& exit, bool forced_kill,
                             const std::string& stderr_text);

template <typename OnLine>
void LineSplitter::Feed(std::string_view data, OnLine&& line) {
  while (!data.empty()) {
    const size_t nl = data.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(data);
      if (partial_.size() > kMaxLine) {
        partial_.clear();
        ++dropped_;
      }
      return;
    }
    if (partial_.empty()) {
      line(data.substr(0, nl));
    } else {
      partial_.append(data.substr(0, nl));
      const std::string whole = std::move(partial_);
      partial_.clear();
      line(std::string_view(whole));
    }
    data.remove_prefix(nl + 1);
  }
}

}  // namespace trtwatch::builds
