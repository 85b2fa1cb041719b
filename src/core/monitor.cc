#include "core/monitor.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

namespace trtwatch {

Monitor::Monitor(const Clock& clock)
    : clock_(clock), start_ns_(clock.NowNs()), last_callback_ns_(start_ns_) {}

namespace {
// TensorRT never sends a null or empty name; both are anomalies (the schema requires
// a non-empty name), counted as null_name.
bool IsMissing(char const* name) { return name == nullptr || *name == '\0'; }
}  // namespace

Monitor::ActivePhase* Monitor::FindActive(char const* name) {
  // The most recent active phase of that name wins. When builder threads run phases
  // of the same name at once (name_shared), the one this thread started is preferred,
  // so that each thread's steps land on its own instance. The active set is a chain of
  // at most ~8 levels per building thread, so a backwards scan beats any index; a
  // phase whose name no other active phase has ends it at once.
  ActivePhase* latest = nullptr;
  for (auto it = active_.rbegin(); it != active_.rend(); ++it) {
    if (std::strcmp(it->name.c_str(), name) != 0) continue;
    if (!it->name_shared || it->thread == std::this_thread::get_id()) return &*it;
    if (latest == nullptr) latest = &*it;
  }
  return latest;
}

int64_t Monitor::NoteCallback() noexcept {
  const int64_t now = clock_.NowNs();
  last_callback_ns_.store(now, std::memory_order_relaxed);
  return now;
}

void Monitor::Push(Event&& event, bool wake) {
  event.t = std::max(0.0, event.t);
  pending_.push_back(std::move(event));
  wake_ = wake_ || wake;
}

void Monitor::phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept {
  NoteCallback();
  try {
    MutexLock lock(&mu_);
    const int64_t now = clock_.NowNs();  // under the lock: no event can slip in before it
    if (finished_) {
      ++anomalies_.after_build;
      return;
    }
    if (IsMissing(phaseName)) {
      ++anomalies_.null_name;
      return;
    }
    if (nbSteps <= 0) ++anomalies_.bad_step_count;
    int64_t parent = kNoPhase;
    if (parentPhase != nullptr) {
      if (ActivePhase* p = FindActive(parentPhase)) {
        parent = p->id;
      } else {
        ++anomalies_.unknown_parent;
      }
    }
    ActivePhase phase;
    phase.id = next_id_;
    // (next_id_ advances only once the phase is committed below.)
    phase.parent = parent;
    phase.name = phaseName;
    phase.total = std::max<int32_t>(nbSteps, 0);
    phase.start_ns = now;
    phase.thread = std::this_thread::get_id();

    Event e;
    e.type = EventType::kPhaseStart;
    e.t = SecondsAt(now);
    e.id = phase.id;
    e.parent = parent;
    e.phase = phase.name;
    e.total = phase.total;
    // All or nothing: what can fail to allocate happens before the phase becomes
    // visible, so a failure leaves no phase without its start event.
    active_.reserve(active_.size() + 1);
    pending_.reserve(pending_.size() + 1);
    if (ActivePhase* same = FindActive(phaseName)) {
      same->name_shared = true;
      phase.name_shared = true;
    }
    active_.push_back(std::move(phase));
    ++next_id_;
    Push(std::move(e), /*wake=*/true);
  } catch (...) {
    // Out of memory: the phase is lost (its steps and finish count as unknown), the
    // build goes on.
  }
  pending_cv_.Signal();
}

void Monitor::QueueStep(ActivePhase& phase, int64_t now_ns) {
  if (phase.pending_batch == batch_) {
    // Latest wins. The event keeps its time and place so that the stream's times
    // stay in order; the value is at most one dispatcher period newer than its time.
    pending_[phase.pending_index].step = phase.last_step;
    return;
  }
  Event e;  // no allocation: names are filled in on the dispatcher's side
  e.type = EventType::kStep;
  e.t = SecondsAt(now_ns);
  e.id = phase.id;
  e.step = phase.last_step;
  e.total = phase.total;
  Push(std::move(e), /*wake=*/false);
  // Only once the push succeeded: a failed push must not leave a place to write to.
  phase.pending_batch = batch_;
  phase.pending_index = pending_.size() - 1;
}

bool Monitor::stepComplete(char const* phaseName, int32_t step) noexcept {
  const int64_t now = NoteCallback();
  try {
    MutexLock lock(&mu_);
    ActivePhase* phase = nullptr;
    if (finished_) {
      ++anomalies_.after_build;
    } else if (IsMissing(phaseName)) {
      ++anomalies_.null_name;
    } else if ((phase = FindActive(phaseName)) == nullptr) {
      ++anomalies_.step_unknown_phase;
    } else if (step < 0 || step >= phase->total) {
      ++anomalies_.step_out_of_range;
    } else if (step > phase->last_step) {  // reports from several threads may cross
      phase->last_step = step;
      QueueStep(*phase, now);
    }
  } catch (...) {
    // Only a first step record of a batch can allocate; losing it loses nothing.
  }
  if (!cancel_.IsRequested()) return true;
  NoteCancelObserved();
  return false;
}

void Monitor::NoteCancelObserved() noexcept {
  if (first_false_noted_.load(std::memory_order_relaxed)) return;
  MutexLock lock(&mu_);
  if (first_false_ns_.has_value()) return;
  // Read after this thread saw the request, under the lock BuildReturned reads it
  // under: never before the request, never after the result.
  first_false_ns_ = std::max(clock_.NowNs(), cancel_.requested_at_ns());
  first_false_noted_.store(true, std::memory_order_relaxed);
}

void Monitor::FinishPhase(std::vector<ActivePhase>::iterator it, int64_t now_ns) {
  const int32_t completed = it->last_step + 1;
  const double elapsed = NsToSeconds(now_ns - it->start_ns);
  const bool early = completed < it->total;

  // What can fail to allocate comes first: a failure leaves the phase active (closed
  // later, by BuildReturned at the latest), never gone without its finish event.
  pending_.reserve(pending_.size() + 1);
  auto summary = summaries_.find(it->name);
  if (summary == summaries_.end()) {
    summary = summaries_.emplace(it->name, PhaseSummary{it->name}).first;
  }
  summary->second.count += 1;
  summary->second.early += early ? 1 : 0;
  summary->second.seconds += elapsed;

  Event e;
  e.type = EventType::kPhaseFinish;
  e.t = SecondsAt(now_ns);
  e.id = it->id;
  e.phase = std::move(it->name);
  e.completed = completed;
  e.total = it->total;
  e.elapsed = elapsed;
  e.early = early;
  active_.erase(it);
  Push(std::move(e), /*wake=*/true);
}

void Monitor::phaseFinish(char const* phaseName) noexcept {
  NoteCallback();
  try {
    MutexLock lock(&mu_);
    const int64_t now = clock_.NowNs();  // under the lock: the phase cannot be newer
    if (finished_) {
      ++anomalies_.after_build;
    } else if (IsMissing(phaseName)) {
      ++anomalies_.null_name;
    } else if (ActivePhase* phase = FindActive(phaseName)) {
      FinishPhase(active_.begin() + (phase - active_.data()), now);
    } else {
      ++anomalies_.finish_unknown_phase;
    }
  } catch (...) {
  }
  pending_cv_.Signal();
}

void Monitor::BuildStarted(const BuildInfo& info) {
  Event e;
  e.type = EventType::kBuildStart;
  e.t = SecondsSinceStart();
  e.build = info.build_id;
  e.backend = info.backend;
  e.model = info.model;
  e.facts = info.facts;
  {
    MutexLock lock(&mu_);
    Push(std::move(e), /*wake=*/true);
  }
  pending_cv_.Signal();
}

void Monitor::Log(Severity severity, std::string_view message) noexcept {
  try {
    Event e;
    e.type = EventType::kLog;
    e.t = SecondsSinceStart();
    e.severity = severity;
    e.message = message;
    MutexLock lock(&mu_);
    if (!finished_) Push(std::move(e), /*wake=*/false);
  } catch (...) {
  }
}

bool Monitor::RequestCancel(CancelReason reason, std::string message) {
  Event e;
  e.type = EventType::kCancelRequested;
  e.reason = reason;
  e.message = message;
  {
    // The request and its event under one lock: BuildReturned sees either neither or
    // both, so a cancelled result always has its cancel_requested.
    MutexLock lock(&mu_);
    const int64_t now = clock_.NowNs();
    pending_.reserve(pending_.size() + 1);
    if (!cancel_.Request(reason, std::move(message), now)) return false;
    if (finished_) return true;  // too late to matter; the result is already out
    e.t = SecondsAt(now);
    Push(std::move(e), /*wake=*/true);
  }
  pending_cv_.Signal();
  return true;
}

void Monitor::ReportStall(double silent_for) {
  Event e;
  e.type = EventType::kStall;
  e.t = SecondsSinceStart();
  e.silent_for = silent_for;
  {
    MutexLock lock(&mu_);
    if (finished_) return;
    Push(std::move(e), /*wake=*/true);
  }
  pending_cv_.Signal();
}

BuildResult Monitor::BuildReturned(const BuildOutcome& outcome) {
  BuildResult result;
  {
    MutexLock lock(&mu_);
    if (finished_) return result_;
    const int64_t now = clock_.NowNs();  // under the lock: no phase can start after it
    // TensorRT finishes its phases before returning; whatever is still open was cut
    // off (a failing backend, a misbehaving caller). Innermost first.
    anomalies_.unfinished_phases += static_cast<int64_t>(active_.size());
    while (!active_.empty()) FinishPhase(active_.end() - 1, now);

    result.elapsed = SecondsAt(now);
    result.error = outcome.error;
    if (outcome.engine_built) {
      result.status = BuildStatus::kSucceeded;
    } else if (cancel_.IsRequested()) {
      result.status = cancel_.reason() == CancelReason::kTimeout ? BuildStatus::kTimedOut
                                                                 : BuildStatus::kCancelled;
    } else {
      result.status = BuildStatus::kFailed;
      if (result.error.empty()) result.error = "the backend returned no engine and gave no reason";
    }
    if (cancel_.IsRequested()) {
      result.cancel_reason = cancel_.reason();
      CancelLatency latency;
      if (first_false_ns_.has_value()) {
        latency.to_first_false = NsToSeconds(*first_false_ns_ - cancel_.requested_at_ns());
      }
      latency.to_return = NsToSeconds(now - cancel_.requested_at_ns());
      result.cancel_latency = latency;
      if (result.status != BuildStatus::kSucceeded && result.error.empty()) {
        result.error = cancel_.message();
      }
    }
    for (auto& [name, summary] : summaries_) result.phases.push_back(summary);
    std::stable_sort(result.phases.begin(), result.phases.end(),
                     [](const PhaseSummary& a, const PhaseSummary& b) { return a.seconds > b.seconds; });
    result.anomalies = anomalies_;

    Event e;
    e.type = EventType::kBuildFinish;
    e.t = result.elapsed;
    e.elapsed = result.elapsed;
    e.status = result.status;
    e.error = result.error;
    e.cancel_latency = result.cancel_latency;
    e.phases = result.phases;
    e.anomalies = result.anomalies;
    Push(std::move(e), /*wake=*/true);
    finished_ = true;
    result_ = result;
  }
  pending_cv_.Signal();
  return result;
}

void Monitor::TakePending(std::vector<Event>* out) {
  MutexLock lock(&mu_);
  std::swap(*out, pending_);
  ++batch_;
  wake_ = false;
  for (const Event& e : *out) {
    if (e.type == EventType::kBuildFinish) finish_taken_ = true;
  }
}

void Monitor::WaitForPending(std::chrono::nanoseconds timeout) {
  MutexLock lock(&mu_);
  if (!wake_) pending_cv_.WaitFor(&mu_, timeout);
}

bool Monitor::FinishTaken() const {
  MutexLock lock(&mu_);
  return finish_taken_;
}

}  // namespace trtwatch
