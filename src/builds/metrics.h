// The service's Prometheus metrics and their text exposition format.
//
// No label ever carries a build id (unbounded cardinality); status labels take the
// eight record states only, and `phase` labels take phase-name families (digits folded,
// history/phase_family.h), at most kMaxPhaseFamilies of them plus "other".
//
// Threading: every member may be called from any thread. One mutex guards all the
// values, so Render() formats a consistent snapshot (no counter moves while it is
// written out); the updates under it are a few increments each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/mutex.h"

namespace trtwatch::builds {

// Not synchronised: its owner guards it.
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

  void BuildFinished(std::string_view status, double seconds) EXCLUDES(mu_);  // final states only
  // A phase of this name finished after `seconds`; counted under the name's family.
  void PhaseFinished(std::string_view phase, double seconds) EXCLUDES(mu_);
  void SseClientOpened() EXCLUDES(mu_);
  void SseClientClosed() EXCLUDES(mu_);
  void SseEventsDropped(uint64_t n) EXCLUDES(mu_);
  void SseClientCutOff() EXCLUDES(mu_);
  // A build this replica ran whose lease another replica took (builds/build_manager.h, Fence).
  void BuildFenced() EXCLUDES(mu_);
  void Request(int status) EXCLUDES(mu_);
  void AcceptFailed() EXCLUDES(mu_);       // accept() failed (out of descriptors)
  void ConnectionRefused() EXCLUDES(mu_);  // over --max-connections: 503
  // An audit entry the store did not take (builds/audit_log.h); the action itself stood.
  void AuditWriteFailed() EXCLUDES(mu_);
  // A build that used the engine cache ended: a hit placed `engine_bytes` without
  // building; a miss built (docs/cache.md).
  void EngineCacheUsed(bool hit, uint64_t engine_bytes) EXCLUDES(mu_);

  // Every sample from now on carries replica="NAME" (replicas on a shared store:
  // Prometheus tells them apart, and sums over the label give the service's totals).
  void LabelReplica(std::string replica) EXCLUDES(mu_);

  // The exposition text; `running` and `queued` are the gauges' current values.
  std::string Render(int64_t running, int64_t queued) const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  // Protected by mu_:
  std::map<std::string, uint64_t, std::less<>> finished_ GUARDED_BY(mu_);  // final status -> count
  Histogram build_seconds_ GUARDED_BY(mu_);
  // Phase family -> its durations; at most kMaxPhaseFamilies entries plus "other".
  std::map<std::string, Histogram, std::less<>> phase_seconds_ GUARDED_BY(mu_);
  int64_t sse_clients_ GUARDED_BY(mu_) = 0;
  uint64_t sse_dropped_ GUARDED_BY(mu_) = 0;
  uint64_t sse_cut_off_ GUARDED_BY(mu_) = 0;
  uint64_t fenced_ GUARDED_BY(mu_) = 0;
  std::map<int, uint64_t> requests_ GUARDED_BY(mu_);  // HTTP status -> count
  uint64_t accept_failures_ GUARDED_BY(mu_) = 0;
  uint64_t refused_ GUARDED_BY(mu_) = 0;
  uint64_t audit_write_failures_ GUARDED_BY(mu_) = 0;
  std::string replica_ GUARDED_BY(mu_);  // empty: no replica label
  uint64_t cache_hits_ GUARDED_BY(mu_) = 0;
  uint64_t cache_misses_ GUARDED_BY(mu_) = 0;
  uint64_t cache_bytes_reused_ GUARDED_BY(mu_) = 0;
};

// `exposition` with `name="value"` added to every sample line's labels (comments kept).
std::string WithLabel(std::string_view exposition, std::string_view name, std::string_view value);

}  // namespace trtwatch::builds
