// BuildRecorder: a sink that keeps what the history and the estimate need of a live
// build: its top-level phases (start, end) and its event log, bounded.
//
// Threading: OnEvent comes from the build's delivery thread; Live() and Entry() may be
// called from any thread (the estimate's, the runner's) and take the recorder's lock.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "core/sink.h"
#include "history/estimator.h"
#include "history/history_entry.h"

namespace trtwatch::history {

class BuildRecorder final : public Sink {
 public:
  void OnEvent(const Event& event) override EXCLUDES(mu_);

  // The phases the sequence keeps (kSequenceDepth), so far, in start order.
  std::vector<LivePhase> Live() const EXCLUDES(mu_);
  // Phases this shallow are "top-level" for the estimate's cadence: the root and its
  // children (deeper ones still place the build; they just do not add estimates).
  static constexpr int kTopLevelDepth = 1;
  // How many starts and finishes of top-level phases there were so far.
  size_t TopLevelChanges() const EXCLUDES(mu_);
  // The entry for the history once the build finished: `result` gives the outcome and
  // the phase times; the key is the caller's.
  HistoryEntry Entry(const BuildResult& result) const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::string build_ GUARDED_BY(mu_);
  std::string backend_ GUARDED_BY(mu_);
  std::string model_ GUARDED_BY(mu_);
  std::vector<LivePhase> live_ GUARDED_BY(mu_);
  std::map<int64_t, size_t> open_ GUARDED_BY(mu_);  // live phase id -> index in live_
  std::map<int64_t, int> depth_ GUARDED_BY(mu_);    // active phase id -> depth
  size_t top_level_changes_ GUARDED_BY(mu_) = 0;
  std::vector<std::string> events_ GUARDED_BY(mu_);  // the first kMaxEventsKept - 1, then build_finish
  std::string finish_ GUARDED_BY(mu_);
};

}  // namespace trtwatch::history
