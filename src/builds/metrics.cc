#include "builds/metrics.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "history/phase_family.h"

namespace trtwatch::builds {

namespace {

// The shortest of %.15g..%.17g that reads back as `v`: "0.1", not "0.10000000000000001".
std::string Number(double v) {
  char buf[32];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

void Header(std::string* out, std::string_view name, std::string_view type, std::string_view help) {
  out->append("# HELP ").append(name).append(" ").append(help).append("\n");
  out->append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

std::vector<double> PhaseBounds() { return {0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600}; }

constexpr std::string_view kOtherPhases = "other";

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string WithLabel(std::string_view exposition, std::string_view name, std::string_view value) {
  const std::string label = std::string(name) + "=\"" + EscapeLabelValue(value) + "\"";
  std::string out;
  out.reserve(exposition.size() + exposition.size() / 4);
  for (size_t start = 0; start < exposition.size();) {
    const size_t end = std::min(exposition.find('\n', start), exposition.size());
    std::string_view line = exposition.substr(start, end - start);
    start = end + 1;
    const size_t name_end = line.find_first_of("{ ");
    if (line.empty() || line.front() == '#' || name_end == std::string_view::npos) {
      out.append(line).append("\n");
    } else if (line[name_end] == '{') {
      out.append(line.substr(0, name_end + 1)).append(label).append(",").append(line.substr(name_end + 1)).append("\n");
    } else {
      out.append(line.substr(0, name_end)).append("{").append(label).append("}").append(line.substr(name_end));
      out.append("\n");
    }
  }
  return out;
}

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::Render(std::string_view name, std::string_view labels, std::string* out) const {
  const std::string prefix = labels.empty() ? std::string() : std::string(labels) + ",";
  const std::string own = labels.empty() ? std::string() : "{" + std::string(labels) + "}";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out->append(name).append("_bucket{").append(prefix).append("le=\"").append(Number(bounds_[i])).append("\"} ");
    out->append(std::to_string(cumulative)).append("\n");
  }
  out->append(name).append("_bucket{").append(prefix).append("le=\"+Inf\"} ").append(std::to_string(count_));
  out->append("\n");
  out->append(name).append("_sum").append(own).append(" ").append(Number(sum_)).append("\n");
  out->append(name).append("_count").append(own).append(" ").append(std::to_string(count_)).append("\n");
}

Metrics::Metrics()
    : finished_{{"succeeded", 0}, {"failed", 0}, {"cancelled", 0}, {"timed_out", 0}, {"interrupted", 0}},
      build_seconds_({1, 5, 15, 60, 300, 900, 1800, 3600, 7200, 14400}) {}

void Metrics::BuildFinished(std::string_view status, double seconds) {
  MutexLock lock(&mu_);
  auto it = finished_.find(status);
  if (it == finished_.end()) it = finished_.emplace(std::string(status), 0).first;
  ++it->second;
  build_seconds_.Observe(seconds);
}

void Metrics::PhaseFinished(std::string_view phase, double seconds) {
  const std::string family = history::PhaseFamily(phase);  // outside the lock: it allocates
  MutexLock lock(&mu_);
  auto it = phase_seconds_.find(family);
  if (it == phase_seconds_.end()) {
    // Past the cap every new family shares one series ("other" itself may be past it).
    const std::string_view key = phase_seconds_.size() < kMaxPhaseFamilies ? std::string_view(family) : kOtherPhases;
    it = phase_seconds_.try_emplace(std::string(key), PhaseBounds()).first;
  }
  it->second.Observe(seconds);
}

void Metrics::LabelReplica(std::string replica) {
  MutexLock lock(&mu_);
  replica_ = std::move(replica);
}

void Metrics::SseClientOpened() {
  MutexLock lock(&mu_);
  ++sse_clients_;
}

void Metrics::SseClientClosed() {
  MutexLock lock(&mu_);
  --sse_clients_;
}

void Metrics::SseEventsDropped(uint64_t n) {
  MutexLock lock(&mu_);
  sse_dropped_ += n;
}

void Metrics::SseClientCutOff() {
  MutexLock lock(&mu_);
  ++sse_cut_off_;
}

void Metrics::BuildFenced() {
  MutexLock lock(&mu_);
  ++fenced_;
}

void Metrics::AuditWriteFailed() {
  MutexLock lock(&mu_);
  ++audit_write_failures_;
}

void Metrics::Request(int status) {
  MutexLock lock(&mu_);
  ++requests_[status];
}

void Metrics::AcceptFailed() {
  MutexLock lock(&mu_);
  ++accept_failures_;
}

void Metrics::ConnectionRefused() {
  MutexLock lock(&mu_);
  ++refused_;
}

void Metrics::EngineCacheUsed(bool hit, uint64_t engine_bytes) {
  MutexLock lock(&mu_);
  if (hit) {
    ++cache_hits_;
    cache_bytes_reused_ += engine_bytes;
  } else {
    ++cache_misses_;
  }
}

std::string Metrics::Render(int64_t running, int64_t queued) const {
  std::string out;
  MutexLock lock(&mu_);  // held throughout: one consistent snapshot
  Header(&out, "trtwatch_builds_finished_total", "counter", "Builds that reached a final state, by that state.");
  for (const auto& [status, n] : finished_) {
    out.append("trtwatch_builds_finished_total{status=\"").append(EscapeLabelValue(status)).append("\"} ");
    out.append(std::to_string(n)).append("\n");
  }
  Header(&out, "trtwatch_builds_running", "gauge", "Builds whose worker process is running (cancelling included).");
  out.append("trtwatch_builds_running ").append(std::to_string(running)).append("\n");
  Header(&out, "trtwatch_builds_queued", "gauge", "Builds waiting for a free worker slot.");
  out.append("trtwatch_builds_queued ").append(std::to_string(queued)).append("\n");
  Header(&out, "trtwatch_build_duration_seconds", "histogram", "Wall time of finished builds, start to end.");
  build_seconds_.Render("trtwatch_build_duration_seconds", "", &out);
  Header(&out, "trtwatch_phase_duration_seconds", "histogram",
         "Elapsed time of finished build phases, by phase name with digits folded to N (at most " +
             std::to_string(kMaxPhaseFamilies) + " names; phases of any other are counted as \"other\").");
  for (const auto& [family, histogram] : phase_seconds_) {
    histogram.Render("trtwatch_phase_duration_seconds", "phase=\"" + EscapeLabelValue(family) + "\"", &out);
  }
  Header(&out, "trtwatch_sse_clients", "gauge", "Open Server-Sent Events streams.");
  out.append("trtwatch_sse_clients ").append(std::to_string(sse_clients_)).append("\n");
  Header(&out, "trtwatch_sse_events_dropped_total", "counter",
         "Step events coalesced away for slow SSE clients (structural events are never dropped).");
  out.append("trtwatch_sse_events_dropped_total ").append(std::to_string(sse_dropped_)).append("\n");
  Header(&out, "trtwatch_sse_clients_cut_off_total", "counter", "SSE clients disconnected for falling too far behind.");
  out.append("trtwatch_sse_clients_cut_off_total ").append(std::to_string(sse_cut_off_)).append("\n");
  Header(&out, "trtwatch_builds_fenced_total", "counter",
         "Builds this replica stopped because another replica took their lease (it was paused or cut off).");
  out.append("trtwatch_builds_fenced_total ").append(std::to_string(fenced_)).append("\n");
  Header(&out, "trtwatch_accept_failures_total", "counter",
         "Failed accepts (usually out of file descriptors); the service backs off and retries.");
  out.append("trtwatch_accept_failures_total ").append(std::to_string(accept_failures_)).append("\n");
  Header(&out, "trtwatch_connections_refused_total", "counter", "Connections answered 503 over --max-connections.");
  out.append("trtwatch_connections_refused_total ").append(std::to_string(refused_)).append("\n");
  Header(&out, "trtwatch_audit_write_failures_total", "counter",
         "Audit entries the store did not take (the actions themselves were done); see stderr.");
  out.append("trtwatch_audit_write_failures_total ").append(std::to_string(audit_write_failures_)).append("\n");
  Header(&out, "trtwatch_engine_cache_hits_total", "counter",
         "Builds that reused an engine from the engine cache: no builder was created.");
  out.append("trtwatch_engine_cache_hits_total ").append(std::to_string(cache_hits_)).append("\n");
  Header(&out, "trtwatch_engine_cache_misses_total", "counter", "Builds that looked in the engine cache and built.");
  out.append("trtwatch_engine_cache_misses_total ").append(std::to_string(cache_misses_)).append("\n");
  Header(&out, "trtwatch_engine_cache_reused_bytes_total", "counter", "Engine bytes placed from the engine cache.");
  out.append("trtwatch_engine_cache_reused_bytes_total ").append(std::to_string(cache_bytes_reused_)).append("\n");
  Header(&out, "trtwatch_http_responses_total", "counter", "HTTP responses, by status code.");
  for (const auto& [code, n] : requests_) {
    out.append("trtwatch_http_responses_total{code=\"").append(std::to_string(code)).append("\"} ");
    out.append(std::to_string(n)).append("\n");
  }
  return replica_.empty() ? out : WithLabel(out, "replica", replica_);
}

}  // namespace trtwatch::builds
