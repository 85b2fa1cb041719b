// EstimateFeed: the live build's estimate events, on a thread of its own.
//
// With enough earlier builds it emits an estimate (history/estimator.h) at each
// top-level phase change the recorder saw and otherwise every 5 s, so that the views
// count down through silent stretches; with too few it emits one estimate without a
// range at the start, saying how many there are. The last estimate goes into the result.
//
// Threading: constructed, stopped and read (last()) by the runner's thread; the feed's
// thread reads the recorder (thread-safe) and calls the monitor (thread-safe).
#pragma once

#include <chrono>
#include <optional>
#include <thread>

#include "core/build_result.h"
#include "core/monitor.h"
#include "core/mutex.h"
#include "history/build_recorder.h"
#include "history/estimator.h"

namespace trtwatch {

struct EstimateFeedOptions {
  std::chrono::milliseconds poll{100};
  double every_seconds = 5;  // the longest time between two estimates
};

class EstimateFeed {
 public:
  EstimateFeed(Monitor& monitor, const history::BuildRecorder& recorder, history::EarlierBuilds earlier,
               EstimateFeedOptions options = {});
  ~EstimateFeed();
  EstimateFeed(const EstimateFeed&) = delete;
  EstimateFeed& operator=(const EstimateFeed&) = delete;

  void Stop() EXCLUDES(mu_);
  std::optional<Estimate> last() const EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);
  void Emit(const Estimate& estimate) EXCLUDES(mu_);

  Monitor& monitor_;
  const history::BuildRecorder& recorder_;
  const history::EarlierBuilds earlier_;
  const EstimateFeedOptions options_;

  mutable Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::optional<Estimate> last_ GUARDED_BY(mu_);

  std::thread thread_;  // started last
};

}  // namespace trtwatch
