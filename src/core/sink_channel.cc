#include "core/sink_channel.h"

#include <utility>

namespace trtwatch {

SinkChannel::SinkChannel(Sink* sink, size_t capacity)
    : sink_(sink), capacity_(capacity), thread_([this] { Run(); }) {}

SinkChannel::~SinkChannel() { Close(); }

void SinkChannel::Push(const Event& event) {
  {
    MutexLock lock(&mu_);
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
    sink_->OnEvent(event);
  }
  sink_->Close();
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
