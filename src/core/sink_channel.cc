#include "core/sink_channel.h"

#include <exception>
#include <utility>

namespace trtwatch {

SinkChannel::SinkChannel(Sink* sink, size_t capacity)
    : sink_(sink), capacity_(capacity), thread_([this] { Run(); }) {}

SinkChannel::~SinkChannel() { Close(); }

void SinkChannel::Push(const Event& event) {
  {
    MutexLock lock(&mu_);
    if (failed_) {
      ++dropped_;
      return;
    }
    if (event.type == EventType::kStep) {
      auto queued = queued_step_.find(event.id);
      if (queued != queued_step_.end()) {
        queue_[queued->second - popped_].step = event.step;  // latest wins
        return;
      }
    }
    if (!IsStructural(event.type) && queue_.size() >= capacity_) {
      ++dropped_;
      return;
    }
    if (event.type == EventType::kStep) queued_step_[event.id] = popped_ + queue_.size();
    queue_.push_back(event);
  }
  cv_.Signal();
}

void SinkChannel::Run() {
  for (;;) {
    Event event;
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !closing_) cv_.Wait(&mu_);
      if (queue_.empty()) break;
      event = std::move(queue_.front());
      queue_.pop_front();
      if (event.type == EventType::kStep) queued_step_.erase(event.id);
      ++popped_;
      if (event.type == EventType::kBuildFinish) event.dropped = dropped_;
    }
    Call(&event);
  }
  if (!failed()) Call(nullptr);
}

bool SinkChannel::Call(const Event* event) {
  // Sinks are user code: whatever they throw stops at the channel.
  try {
    if (event != nullptr) {
      sink_->OnEvent(*event);
    } else {
      sink_->Close();
    }
    return true;
  } catch (const std::exception& e) {
    Detach(e.what());
  } catch (...) {
    Detach("it threw something that is not a std::exception");
  }
  return false;
}

void SinkChannel::Detach(std::string what) {
  MutexLock lock(&mu_);
  failed_ = true;
  failure_ = std::move(what);
  dropped_ += queue_.size();
  popped_ += queue_.size();
  queue_.clear();
  queued_step_.clear();
}

bool SinkChannel::TakeFailure(std::string* what) {
  MutexLock lock(&mu_);
  if (!failed_ || failure_taken_) return false;
  failure_taken_ = true;
  *what = failure_;
  return true;
}

bool SinkChannel::failed() const {
  MutexLock lock(&mu_);
  return failed_;
}

void SinkChannel::Close() {
  {
    MutexLock lock(&mu_);
    closing_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

uint64_t SinkChannel::dropped() const {
  MutexLock lock(&mu_);
  return dropped_;
}

}  // namespace trtwatch
