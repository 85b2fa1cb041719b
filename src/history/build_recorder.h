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

  // The top-level phases so far, in start order.
  std::vector<LivePhase> Live() const EXCLUDES(mu_);
  // How many top-level boundaries (starts and ends) there were so far: a change is a
  // top-level phase change.
  size_t Boundaries() const EXCLUDES(mu_);
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
  size_t boundaries_ GUARDED_BY(mu_) = 0;
  std::vector<std::string> events_ GUARDED_BY(mu_);  // the first kMaxEventsKept - 1, then build_finish
  std::string finish_ GUARDED_BY(mu_);
};

}  // namespace trtwatch::history
