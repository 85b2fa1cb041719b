// The service's Prometheus metrics and their text exposition format.
//
// No label ever carries a build id (unbounded cardinality); status labels take the
// eight record states only, and `phase` labels take phase-name families (digits folded,
// service/phase_family.h), at most kMaxPhaseFamilies of them plus "other".
//
// Threading: owned by the service's event loop thread and not synchronised; Render()
// runs on that thread too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace trtwatch::service {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // Appends the _bucket/_sum/_count lines of `name`. `labels` (already escaped, e.g.
  // `phase="Timing"`, or empty) go before `le` on every line.
  void Render(std::string_view name, std::string_view labels, std::string* out) const;

 private:
  std::vector<double> bounds_;    // upper bounds, increasing; +Inf implied
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

// `value` escaped as a label value of the Prometheus text format: backslash, double
// quote and line feed become \\, \" and \n.
std::string EscapeLabelValue(std::string_view value);

class Metrics {
 public:
  // Distinct `phase` label values kept; phases of any further family count as "other".
  static constexpr size_t kMaxPhaseFamilies = 100;

  Metrics();

  void BuildFinished(std::string_view status, double seconds);  // final states only
  // A phase of this name finished after `seconds`; counted under the name's family.
  void PhaseFinished(std::string_view phase, double seconds);
  void SseClientOpened() { ++sse_clients_; }
  void SseClientClosed() { --sse_clients_; }
  void SseEventsDropped(uint64_t n) { sse_dropped_ += n; }
  void SseClientCutOff() { ++sse_cut_off_; }
  void Request(int status) { ++requests_[status]; }
  void AcceptFailed() { ++accept_failures_; }     // accept() failed (out of descriptors)
  void ConnectionRefused() { ++refused_; }        // over --max-connections: 503

  // The exposition text; `running` and `queued` are the gauges' current values.
  std::string Render(int64_t running, int64_t queued) const;

 private:
  std::map<std::string, uint64_t, std::less<>> finished_;  // final status -> count
  Histogram build_seconds_;
  // Phase family -> its durations; at most kMaxPhaseFamilies entries plus "other".
  std::map<std::string, Histogram, std::less<>> phase_seconds_;
  int64_t sse_clients_ = 0;
  uint64_t sse_dropped_ = 0;
  uint64_t sse_cut_off_ = 0;
  std::map<int, uint64_t> requests_;  // HTTP status -> count
  uint64_t accept_failures_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace trtwatch::service
