#include "core/monitor.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

namespace trtwatch {

namespace {

// TensorRT never sends a null or empty name; both are anomalies (the schema requires
// a non-empty name), counted as null_name.
bool IsMissing(char const* name) { return name == nullptr || *name == '\0'; }

std::atomic<uint64_t> g_next_serial{1};

// Room for `more` elements, growing geometrically: reserve(size() + 1) would reallocate
// (and move every element) on each call, quadratic while the dispatcher lags behind.
template <class T>
void ReserveMore(std::vector<T>& v, size_t more) {
  if (v.capacity() - v.size() >= more) return;
  v.reserve(std::max(v.size() + more, 2 * v.capacity()));
}

// The phase this thread last reported a step for, with the version of its name's
// bucket at the time; `monitor` is the owning monitor's serial (0: empty).
struct StepCache {
  uint64_t monitor = 0;
  void* phase = nullptr;
  uint64_t version = 0;
};
thread_local StepCache t_step_cache;

}  // namespace

Monitor::Monitor(const Clock& clock)
    : clock_(clock),
      start_ns_(clock.NowNs()),
      serial_(g_next_serial.fetch_add(1, std::memory_order_relaxed)),
      last_phase_callback_ns_(start_ns_),
      last_step_seen_ns_(start_ns_) {}

uint32_t Monitor::BucketOf(char const* name) noexcept {
  uint32_t h = 2166136261u;  // FNV-1a
  for (; *name != '\0'; ++name) h = (h ^ static_cast<unsigned char>(*name)) * 16777619u;
  return h % kVersionBuckets;
}

Monitor::PhaseState* Monitor::FindActive(char const* name) {
  // The most recent active phase of that name wins. When builder threads run phases
  // of the same name at once (name_shared), the one this thread started is preferred,
  // so that each thread's steps land on its own instance. The active set is a chain of
  // at most ~8 levels per building thread, so a backwards scan beats any index; a
  // phase whose name no other active phase has ends it at once.
  PhaseState* latest = nullptr;
  for (auto it = active_.rbegin(); it != active_.rend(); ++it) {
    PhaseState* phase = *it;
    if (std::strcmp(phase->name.c_str(), name) != 0) continue;
    if (!phase->name_shared || phase->thread == std::this_thread::get_id()) return phase;
    if (latest == nullptr) latest = phase;
  }
  return latest;
}

int64_t Monitor::LastCallbackNs() {
  MutexLock lock(&mu_);
  uint64_t steps = finished_steps_ + locked_steps_ + unraised_steps_.load(std::memory_order_relaxed);
  for (const PhaseState* phase : active_) steps += phase->word.load(std::memory_order_relaxed) & kStepMask;
  if (steps != seen_steps_) {
    seen_steps_ = steps;
    last_step_seen_ns_ = clock_.NowNs();
  }
  return std::max(last_phase_callback_ns_, last_step_seen_ns_);
}

void Monitor::Push(Event&& event, bool wake) {
  event.t = std::max(0.0, event.t);
  pending_.push_back(std::move(event));
  wake_ = wake_ || wake;
}

inline bool Monitor::DropsStart(char const* name, int32_t steps) {
  if (finished_) {
    ++anomalies_.after_build;
    return true;
  }
  if (IsMissing(name)) {
    ++anomalies_.null_name;
    return true;
  }
  if (steps <= 0) ++anomalies_.bad_step_count;
  return false;
}

inline Monitor::PhaseState* Monitor::ActiveParent(char const* parent_name) {
  if (parent_name == nullptr) return nullptr;
  PhaseState* parent = FindActive(parent_name);
  if (parent == nullptr) ++anomalies_.unknown_parent;
  return parent;
}

void Monitor::phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept {
  bool signal = false;  // only the event that raises wake_ wakes the dispatcher
  try {
    MutexLock lock(&mu_);
    const int64_t now = clock_.NowNs();  // under the lock: no event can slip in before it
    last_phase_callback_ns_ = now;
    if (DropsStart(phaseName, nbSteps)) return;
    PhaseState* const parent_state = ActiveParent(parentPhase);
    const int64_t parent = parent_state != nullptr ? parent_state->id : kNoPhase;
    // All or nothing: everything that can fail to allocate happens before the phase
    // becomes visible, so a failure leaves no phase without its start event. (A summary
    // created for a phase that then failed has count 0 and is left out of the result.)
    Event e;
    e.type = EventType::kPhaseStart;
    e.t = SecondsAt(now);
    e.id = next_id_;
    e.parent = parent;
    e.phase = phaseName;
    e.total = std::max<int32_t>(nbSteps, 0);
    std::string name = e.phase;
    ReserveMore(active_, 1);
    ReserveMore(pending_, 1);
    PhaseSummary& summary = summaries_.try_emplace(e.phase, PhaseSummary{e.phase}).first->second;
    PhaseState& phase = phases_.emplace_back();
    // Nothing below throws.
    phase.id = next_id_++;
    phase.parent = parent;
    phase.name = std::move(name);
    phase.total = e.total;
    phase.start_ns = now;
    phase.thread = std::this_thread::get_id();
    phase.bucket = BucketOf(phaseName);
    phase.summary = &summary;
    phase.parent_state = parent_state;
    if (parent_state != nullptr && parent_state->active_children++ == 0) parent_state->children_since_ns = now;
    if (PhaseState* same = FindActive(phaseName)) {
      same->name_shared = true;
      phase.name_shared = true;
    }
    active_.push_back(&phase);
    const uint64_t version = versions_[phase.bucket].value.fetch_add(1, std::memory_order_release) + 1;
    // The new phase is what its name now resolves to on this thread: its first step
    // finds it without the lock.
    t_step_cache = StepCache{serial_, &phase, version};
    signal = !wake_;
    Push(std::move(e), /*wake=*/true);
  } catch (...) {
    // Out of memory: the phase is lost (its steps and finish count as unknown), the
    // build goes on.
  }
  if (signal) pending_cv_.Signal();
}

bool Monitor::RaiseStep(PhaseState& phase, int32_t step) noexcept {
  uint64_t word = phase.word.load(std::memory_order_relaxed);
  const uint64_t value = static_cast<uint64_t>(static_cast<uint32_t>(step) + 1u);
  for (;;) {
    if ((word & kFinished) != 0) return false;
    // Reports from several threads may cross: an older step changes nothing.
    if (value <= (word & kStepMask)) {
      unraised_steps_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    const uint64_t raised = (word & ~kStepMask) | value | kDirty;
    if (phase.word.compare_exchange_weak(word, raised, std::memory_order_acq_rel, std::memory_order_relaxed)) {
      if ((word & kDirty) == 0) PushDirty(phase);
      return true;
    }
  }
}

void Monitor::PushDirty(PhaseState& phase) noexcept {
  // Only the step that set kDirty pushes, so a phase is on the list at most once.
  PhaseState* head = dirty_.load(std::memory_order_relaxed);
  do {
    phase.next_dirty.store(head, std::memory_order_relaxed);
  } while (!dirty_.compare_exchange_weak(head, &phase, std::memory_order_release, std::memory_order_relaxed));
}

void Monitor::StepLocked(char const* phaseName, int32_t step) noexcept {
  MutexLock lock(&mu_);
  ++locked_steps_;
  PhaseState* phase = nullptr;
  if (finished_) {
    ++anomalies_.after_build;
  } else if (IsMissing(phaseName)) {
    ++anomalies_.null_name;
  } else if ((phase = FindActive(phaseName)) == nullptr) {
    ++anomalies_.step_unknown_phase;
  } else {
    // Versions change only under mu_, so this one belongs to what FindActive saw.
    t_step_cache = StepCache{serial_, phase, versions_[phase->bucket].value.load(std::memory_order_relaxed)};
    if (step < 0 || step >= phase->total) {
      ++anomalies_.step_out_of_range;
    } else {
      RaiseStep(*phase, step);  // cannot see kFinished: that is set under mu_
    }
  }
}

bool Monitor::stepComplete(char const* phaseName, int32_t step) noexcept {
  // The common step, inline: newer than the phase's, whose last step is not delivered
  // yet (kDirty set: nothing to push) and which is not finished. One CAS; anything else,
  // or a CAS that loses a race, takes RaiseStep (out of line: a call, its loop and
  // the push cost most of a step that is only this).
  const auto raise_dirty = [](PhaseState& phase, int32_t raised) noexcept {
    uint64_t word = phase.word.load(std::memory_order_relaxed);
    const uint64_t value = static_cast<uint64_t>(static_cast<uint32_t>(raised) + 1u);
    return (word & (kDirty | kFinished)) == kDirty && value > (word & kStepMask) &&
           phase.word.compare_exchange_strong(word, (word & ~kStepMask) | value, std::memory_order_acq_rel,
                                              std::memory_order_relaxed);
  };
  const StepCache& cache = t_step_cache;
  bool done = false;
  if (cache.monitor == serial_ && phaseName != nullptr) {
    // Phase records are never freed while the monitor lives, so the cached pointer is
    // safe to read even when stale; the version says whether it is still the phase
    // this name resolves to for this thread.
    auto* phase = static_cast<PhaseState*>(cache.phase);
    done = versions_[phase->bucket].value.load(std::memory_order_acquire) == cache.version &&
           std::strcmp(phase->name.c_str(), phaseName) == 0 && step >= 0 && step < phase->total &&
           (raise_dirty(*phase, step) || RaiseStep(*phase, step));
  }
  if (!done) StepLocked(phaseName, step);
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

void Monitor::FinishPhase(size_t index, int64_t now_ns) {
  PhaseState& phase = *active_[index];
  Event e;
  e.phase = phase.name;  // the only allocation; before anything changes
  // Nothing below throws (pending_ has room for two more events).
  const uint64_t word = phase.word.fetch_or(kFinished, std::memory_order_acq_rel);
  const int32_t completed = static_cast<int32_t>(word & kStepMask);
  finished_steps_ += static_cast<uint64_t>(completed);  // leaves the active sum: keeps the total
  if ((word & kDirty) != 0) {  // its last step goes out before its finish
    Event step;
    step.type = EventType::kStep;
    step.t = SecondsAt(now_ns);
    step.id = phase.id;
    step.step = completed - 1;
    step.total = phase.total;
    Push(std::move(step), /*wake=*/false);
  }
  const int64_t elapsed_ns = now_ns - phase.start_ns;
  const double elapsed = NsToSeconds(elapsed_ns);
  const bool early = completed < phase.total;
  phase.summary->count += 1;
  phase.summary->early += early ? 1 : 0;
  phase.summary->seconds += elapsed;
  // Self time: this instance less the union of its direct children's intervals, so
  // children side by side on several threads are not taken out twice. A child still
  // active (a parent finished first) covers the parent up to now.
  const int64_t covered =
      phase.children_ns + (phase.active_children > 0 ? now_ns - phase.children_since_ns : 0);
  phase.summary->self_seconds += NsToSeconds(std::max<int64_t>(elapsed_ns - covered, 0));
  if (PhaseState* parent = phase.parent_state; parent != nullptr && --parent->active_children == 0) {
    parent->children_ns += now_ns - parent->children_since_ns;  // (no effect once the parent finished)
  }

  e.type = EventType::kPhaseFinish;
  e.t = SecondsAt(now_ns);
  e.id = phase.id;
  e.completed = completed;
  e.total = phase.total;
  e.elapsed = elapsed;
  e.early = early;
  active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(index));
  versions_[phase.bucket].value.fetch_add(1, std::memory_order_release);
  Push(std::move(e), /*wake=*/true);
}

void Monitor::phaseFinish(char const* phaseName) noexcept {
  bool signal = false;  // only the event that raises wake_ wakes the dispatcher
  try {
    MutexLock lock(&mu_);
    const int64_t now = clock_.NowNs();  // under the lock: the phase cannot be newer
    last_phase_callback_ns_ = now;
    if (finished_) {
      ++anomalies_.after_build;
    } else if (IsMissing(phaseName)) {
      ++anomalies_.null_name;
    } else if (PhaseState* phase = FindActive(phaseName)) {
      // Room first: a failure leaves the phase active (closed later, by BuildReturned
      // at the latest), never gone without its finish event.
      ReserveMore(pending_, 2);
      const auto it = std::find(active_.begin(), active_.end(), phase);
      signal = !wake_;
      FinishPhase(static_cast<size_t>(it - active_.begin()), now);
    } else {
      ++anomalies_.finish_unknown_phase;
    }
  } catch (...) {
  }
  if (signal) pending_cv_.Signal();
}

void Monitor::BuildStarted(const BuildInfo& info) {
  Event e;
  e.type = EventType::kBuildStart;
  e.build = info.build_id;
  e.backend = info.backend;
  e.model = info.model;
  e.facts = info.facts;
  e.cache = info.cache;
  {
    MutexLock lock(&mu_);
    cache_ = info.cache;
    e.t = SecondsSinceStart();
    Push(std::move(e), /*wake=*/true);
  }
  pending_cv_.Signal();
}

void Monitor::Log(Severity severity, std::string_view message) noexcept {
  try {
    Event e;
    e.type = EventType::kLog;
    e.severity = severity;
    e.message = message;
    MutexLock lock(&mu_);
    e.t = SecondsSinceStart();
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
    ReserveMore(pending_, 1);
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
  e.silent_for = silent_for;
  {
    MutexLock lock(&mu_);
    if (finished_) return;
    e.t = SecondsSinceStart();
    Push(std::move(e), /*wake=*/true);
  }
  pending_cv_.Signal();
}

void Monitor::ReportEstimate(const Estimate& estimate) {
  Event e;
  e.type = EventType::kEstimate;
  e.estimate = estimate;
  {
    MutexLock lock(&mu_);
    if (finished_) return;
    e.t = SecondsSinceStart();
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
    ReserveMore(pending_, 2 * active_.size() + 1);
    anomalies_.unfinished_phases += static_cast<int64_t>(active_.size());
    while (!active_.empty()) FinishPhase(active_.size() - 1, now);

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
    for (auto& [name, summary] : summaries_) {
      if (summary.count > 0) result.phases.push_back(summary);
    }
    std::stable_sort(result.phases.begin(), result.phases.end(),
                     [](const PhaseSummary& a, const PhaseSummary& b) { return a.seconds > b.seconds; });
    result.anomalies = anomalies_;
    result.cache = cache_;

    Event e;
    e.type = EventType::kBuildFinish;
    e.t = result.elapsed;
    e.elapsed = result.elapsed;
    e.status = result.status;
    e.error = result.error;
    e.cancel_latency = result.cancel_latency;
    e.phases = result.phases;
    e.anomalies = result.anomalies;
    e.cache = result.cache;
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
  wake_ = false;
  for (const Event& e : *out) {
    if (e.type == EventType::kBuildFinish) finish_taken_ = true;
  }
  // Phases with a newer step: each one step event, after everything above (a phase
  // started in this batch has its start there; a finished one already had its step
  // pushed before its finish, and is skipped here).
  PhaseState* dirty = dirty_.exchange(nullptr, std::memory_order_acquire);
  if (dirty == nullptr) return;
  size_t count = 0;
  for (PhaseState* p = dirty; p != nullptr; p = p->next_dirty.load(std::memory_order_relaxed)) ++count;
  try {
    ReserveMore(*out, count);
  } catch (...) {
    // No room: put the list back for the next take (each phase keeps its kDirty).
    PhaseState* tail = dirty;
    while (tail->next_dirty.load(std::memory_order_relaxed) != nullptr) {
      tail = tail->next_dirty.load(std::memory_order_relaxed);
    }
    PhaseState* head = dirty_.load(std::memory_order_relaxed);
    do {
      tail->next_dirty.store(head, std::memory_order_relaxed);
    } while (!dirty_.compare_exchange_weak(head, dirty, std::memory_order_release, std::memory_order_relaxed));
    return;
  }
  const double t = SecondsAt(clock_.NowNs());
  for (PhaseState* p = dirty; p != nullptr;) {
    PhaseState* next = p->next_dirty.load(std::memory_order_relaxed);  // before kDirty clears
    const uint64_t word = p->word.fetch_and(~kDirty, std::memory_order_acq_rel);
    if ((word & kDirty) != 0 && (word & kFinished) == 0) {
      Event e;  // no allocation: names are filled in on the dispatcher's side
      e.type = EventType::kStep;
      e.t = t;
      e.id = p->id;
      e.step = static_cast<int32_t>(word & kStepMask) - 1;
      e.total = p->total;
      out->push_back(std::move(e));
    }
    p = next;
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
