#include "core/dispatcher.h"

#include <algorithm>

namespace trtwatch {

Dispatcher::Dispatcher(Monitor& monitor, const std::vector<Sink*>& sinks, DeliveryOptions options)
    : monitor_(monitor), options_(options) {
  for (Sink* sink : sinks) {
    channels_.push_back(std::make_unique<SinkChannel>(sink, options_.sink_capacity));
  }
  thread_ = std::thread([this] { Run(); });
}

Dispatcher::~Dispatcher() {
  abandon_.store(true, std::memory_order_relaxed);
  Join();
}

void Dispatcher::Deliver(Event& event) {
  event.seq = next_seq_++;
  event.t = std::max(event.t, last_t_);
  last_t_ = event.t;
  switch (event.type) {
    case EventType::kPhaseStart:
      names_[event.id] = event.phase;
      break;
    case EventType::kStep: {
      auto name = names_.find(event.id);
      if (name != names_.end()) event.phase = name->second;
      break;
    }
    case EventType::kPhaseFinish:
      names_.erase(event.id);
      break;
    default:
      break;
  }
  for (auto& channel : channels_) channel->Push(event);
}

void Dispatcher::Run() {
  std::vector<Event> batch;
  bool finished = false;
  while (!finished && !abandon_.load(std::memory_order_relaxed)) {
    monitor_.WaitForPending(options_.step_period);
    monitor_.TakePending(&batch);
    for (Event& event : batch) {
      Deliver(event);
      finished = finished || event.type == EventType::kBuildFinish;
    }
    batch.clear();  // keeps its capacity for the monitor's next batch
  }
}

uint64_t Dispatcher::Join() {
  if (thread_.joinable()) thread_.join();
  uint64_t dropped = 0;
  for (auto& channel : channels_) {
    channel->Close();
    dropped += channel->dropped();
  }
  return dropped;
}

}  // namespace trtwatch
