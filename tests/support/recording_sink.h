// A Sink that keeps every event it receives, for tests. Implements the production
// interface; optionally slow, to stand for a stalled terminal or network client.
#pragma once

#include <chrono>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "core/sink.h"

namespace trtwatch::testing {

class RecordingSink : public Sink {
 public:
  explicit RecordingSink(std::chrono::microseconds delay = std::chrono::microseconds(0)) : delay_(delay) {}

  void OnEvent(const Event& event) override {
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    MutexLock lock(&mu_);
    events_.push_back(event);
  }
  void Close() override {
    MutexLock lock(&mu_);
    closed_ = true;
  }

  std::vector<Event> events() const {
    MutexLock lock(&mu_);
    return events_;
  }
  bool closed() const {
    MutexLock lock(&mu_);
    return closed_;
  }

 private:
  const std::chrono::microseconds delay_;
  mutable Mutex mu_;
  std::vector<Event> events_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace trtwatch::testing
