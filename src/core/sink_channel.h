// SinkChannel: one sink, its bounded queue and the thread that feeds it.
//
// Threading: Push() is called by the dispatcher thread and never blocks on the sink;
// the channel's own thread calls the sink. The queue is bounded for what may be lost:
// a step replaces the queued step of the same phase (latest wins); when the queue is
// full, new steps, logs and stalls are dropped and counted. Structural events (build,
// phase start/finish, cancellation) are always queued. The sink learns how many events
// it missed from build_finish's `dropped`.
//
// A sink that throws (from OnEvent or Close) is contained: the channel catches it,
// detaches the sink (it is never called again, not even Close), counts what it no longer
// receives as dropped and keeps the failure for the dispatcher to report.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/event.h"
#include "core/mutex.h"
#include "core/sink.h"

namespace trtwatch {

class SinkChannel {
 public:
  SinkChannel(Sink* sink, size_t capacity);
  ~SinkChannel();
  SinkChannel(const SinkChannel&) = delete;
  SinkChannel& operator=(const SinkChannel&) = delete;

  void Push(const Event& event) EXCLUDES(mu_);
  // Delivers what is queued, closes the sink and joins the thread. Idempotent.
  void Close() EXCLUDES(mu_);
  uint64_t dropped() const EXCLUDES(mu_);
  // The sink's failure (what it threw), once; false if it has not failed or the failure
  // was already taken.
  bool TakeFailure(std::string* what) EXCLUDES(mu_);
  bool failed() const EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);
  // Calls the sink; false (and the channel detached) if it threw.
  bool Call(const Event* event) EXCLUDES(mu_);
  void Detach(std::string what) EXCLUDES(mu_);

  Sink* const sink_;
  const size_t capacity_;

  mutable Mutex mu_;
  CondVar cv_;
  // Protected by mu_:
  std::deque<Event> queue_ GUARDED_BY(mu_);
  uint64_t popped_ GUARDED_BY(mu_) = 0;  // events taken so far: queue_.front()'s index
  std::unordered_map<int64_t, uint64_t> queued_step_ GUARDED_BY(mu_);  // phase id -> index
  uint64_t dropped_ GUARDED_BY(mu_) = 0;
  bool closing_ GUARDED_BY(mu_) = false;
  bool failed_ GUARDED_BY(mu_) = false;
  bool failure_taken_ GUARDED_BY(mu_) = false;
  std::string failure_ GUARDED_BY(mu_);

  std::thread thread_;  // started last; joined by Close()
};

}  // namespace trtwatch
