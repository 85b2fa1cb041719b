#include "runner/estimate_feed.h"

#include <utility>

namespace trtwatch {

EstimateFeed::EstimateFeed(Monitor& monitor, const history::BuildRecorder& recorder, history::EarlierBuilds earlier,
                           EstimateFeedOptions options)
    : monitor_(monitor), recorder_(recorder), earlier_(std::move(earlier)), options_(options) {
  if (earlier_.builds.empty()) {
    // Said once, plainly: no ETA, and how much history there is.
    Emit(history::EstimateRemaining(earlier_, {}, 0));
    return;
  }
  thread_ = std::thread([this] { Run(); });
}

EstimateFeed::~EstimateFeed() { Stop(); }

void EstimateFeed::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

std::optional<Estimate> EstimateFeed::last() const {
  MutexLock lock(&mu_);
  return last_;
}

void EstimateFeed::Emit(const Estimate& estimate) {
  monitor_.ReportEstimate(estimate);
  MutexLock lock(&mu_);
  last_ = estimate;
}

void EstimateFeed::Run() {
  size_t changes_seen = static_cast<size_t>(-1);  // the first pass emits
  double last_emitted = 0;
  for (;;) {
    {
      MutexLock lock(&mu_);
      if (stop_) return;
      cv_.WaitFor(&mu_, options_.poll);
      if (stop_) return;
    }
    const double now = monitor_.SecondsSinceStart();
    const size_t changes = recorder_.TopLevelChanges();
    if (changes == changes_seen && now - last_emitted < options_.every_seconds) continue;
    changes_seen = changes;
    last_emitted = now;
    Emit(history::EstimateRemaining(earlier_, recorder_.Live(), now));
  }
}

}  // namespace trtwatch
