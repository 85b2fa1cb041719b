// Dispatcher: the one thread between the monitor and the sinks.
//
// It takes the monitor's pending batches (woken at once for structural events, every
// `step_period` for steps), stamps `seq` (strictly increasing from 1) and keeps `t`
// non-decreasing, names step events, and hands each event to every SinkChannel. It
// stops after build_finish. Its own state is touched by its thread alone.
// When a sink fails (throws; its channel detaches it), the next batch reports it to the
// other sinks as an error log line.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/monitor.h"
#include "core/sink.h"
#include "core/sink_channel.h"

namespace trtwatch {

struct DeliveryOptions {
  std::chrono::milliseconds step_period{20};
  size_t sink_capacity = 1024;
};

class Dispatcher {
 public:
  Dispatcher(Monitor& monitor, const std::vector<Sink*>& sinks, DeliveryOptions options);
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Waits until build_finish has reached every sink and the sinks are closed. Call
  // after Monitor::BuildReturned. Returns the events dropped over all sinks.
  uint64_t Join();
  // Sinks detached because they threw. Valid after Join().
  int failed_sinks() const;

 private:
  void Run();
  void Deliver(Event& event);
  // Tells the remaining sinks about sinks that failed since the last call.
  void ReportFailedSinks();

  Monitor& monitor_;
  const DeliveryOptions options_;
  std::vector<std::unique_ptr<SinkChannel>> channels_;
  // Set by the destructor to abandon a build that never returned. Atomic: read by
  // the dispatcher thread, written by the owner; it orders nothing else.
  std::atomic<bool> abandon_{false};

  // Dispatcher thread only:
  uint64_t next_seq_ = 1;
  double last_t_ = 0;
  std::unordered_map<int64_t, std::string> names_;  // active phase id -> name

  std::thread thread_;  // started last
};

}  // namespace trtwatch
