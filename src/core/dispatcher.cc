#include "core/dispatcher.h"

#include <algorithm>
#include <string>

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
      if (event.type == EventType::kBuildFinish) ReportFailedSinks();
      Deliver(event);
      finished = finished || event.type == EventType::kBuildFinish;
    }
    if (!finished) ReportFailedSinks();
    batch.clear();  // keeps its capacity for the monitor's next batch
  }
}

void Dispatcher::ReportFailedSinks() {
  std::string what;
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (!channels_[i]->TakeFailure(&what)) continue;
    Event e;
    e.type = EventType::kLog;
    e.t = last_t_;
    e.severity = Severity::kError;
    e.message = "output " + std::to_string(i + 1) + " of " + std::to_string(channels_.size()) +
                " failed and was detached (the build goes on): " + what;
    Deliver(e);
  }
}

int Dispatcher::failed_sinks() const {
  int failed = 0;
  for (const auto& channel : channels_) failed += channel->failed() ? 1 : 0;
  return failed;
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
