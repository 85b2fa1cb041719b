// Monitor: the object TensorRT's progress callbacks land on.
//
// Threading contract:
//  - phaseStart / stepComplete / phaseFinish have TensorRT's exact signatures and may be
//    called from any number of threads at once. They never block on I/O, never throw.
//  - stepComplete takes no shared lock and does not allocate once its phase exists: it
//    finds the phase through a per-thread cache of the phase that thread last reported
//    (checked against a version that changes only when a phase of a name with the same
//    hash starts or finishes), raises the phase's step with one CAS on that phase's own
//    cache line, and checks the cancellation flag with one atomic load. Steps of
//    different phases on different threads therefore share no written memory. The lock
//    is taken only on a cache miss (first step of a phase on a thread, after a same-named
//    phase started or finished), for an anomaly, and once when the first refused step is
//    dated.
//  - phaseStart / phaseFinish and the lifecycle calls (BuildStarted, Log, RequestCancel,
//    ReportStall, ReportEstimate, BuildReturned) take the monitor's lock; every time they stamp is read
//    under it, so no event is older than the state it describes.
//  - Events are not delivered from the callbacks. Structural events and logs wait in a
//    pending batch; a phase with a new step is put once on a lock-free "dirty" list.
//    A single Dispatcher takes both (TakePending): steps coalesce (latest wins), a
//    phase's last step always precedes its phase_finish, and structural events are never
//    dropped.
//  - A phase's record lives until the Monitor is destroyed (so that a stale per-thread
//    cache never points at freed memory): about 200 bytes per phase of the build.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/build_result.h"
#include "core/cancellation.h"
#include "core/clock.h"
#include "core/event.h"
#include "core/mutex.h"

namespace trtwatch {

class Monitor {
 public:
  explicit Monitor(const Clock& clock);
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  // TensorRT's nvinfer1::IProgressMonitor, name for name.
  void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept;
  bool stepComplete(char const* phaseName, int32_t step) noexcept;
  void phaseFinish(char const* phaseName) noexcept;

  // Emits build_start. Call once, before the backend starts building.
  void BuildStarted(const BuildInfo& info);
  // A TensorRT logger line (or a backend's own message).
  void Log(Severity severity, std::string_view message) noexcept;
  // Requests cancellation once; later calls return false and change nothing. From the
  // next stepComplete on, on every thread, the monitor returns false.
  bool RequestCancel(CancelReason reason, std::string message);
  // Emits a stall event: no callback for `silent_for` seconds.
  void ReportStall(double silent_for);
  // Emits an estimate event (the remaining time from history; runner/estimate_feed.h).
  void ReportEstimate(const Estimate& estimate);
  // The backend's build call returned. Closes phases left open, concludes the status,
  // emits build_finish and returns the result. Later calls return the same result.
  BuildResult BuildReturned(const BuildOutcome& outcome);

  bool IsCancelRequested() const noexcept { return cancel_.IsRequested(); }
  const CancellationSource& cancellation() const { return cancel_; }
  const Clock& clock() const { return clock_; }
  // Monotonic time of the latest progress callback (or of construction), for the stall
  // watch. Phase starts and finishes are dated exactly; a step is dated by the first
  // call that sees the step counts moved, so poll it (the watchdog does, every 50 ms):
  // a step is dated late by at most the polling interval, never early.
  int64_t LastCallbackNs() EXCLUDES(mu_);
  double SecondsSinceStart() const { return NsToSeconds(clock_.NowNs() - start_ns_); }

  // Delivery side, for the single Dispatcher. Swaps the pending batch into `*out`
  // (pass an empty vector; its capacity is reused by the next batch).
  void TakePending(std::vector<Event>* out) EXCLUDES(mu_);
  // Waits until an event that must not wait (anything but step/log) is pending, or
  // `timeout` passes. Steps are picked up by the dispatcher's periodic takes.
  void WaitForPending(std::chrono::nanoseconds timeout) EXCLUDES(mu_);
  // True once build_finish has been taken by TakePending.
  bool FinishTaken() const EXCLUDES(mu_);

 private:
  // One phase instance. Identity fields are written before the phase is published
  // (under mu_) and never change; `word` is the only field written without mu_.
  struct PhaseState {
    int64_t id = kNoPhase;
    int64_t parent = kNoPhase;
    std::string name;
    int32_t total = 0;
    int64_t start_ns = 0;
    std::thread::id thread;  // the thread that started it
    uint32_t bucket = 0;     // versions_ slot of its name
    PhaseSummary* summary = nullptr;
    PhaseState* parent_state = nullptr;  // the instance `parent` names; null at the root
    // Protected by mu_ (not annotated: a member of a struct held by pointer):
    bool name_shared = false;  // another phase of this name was active alongside it
    // Time covered by its direct children (the union of their intervals, for its self
    // time): while active_children > 0 the cover runs from children_since_ns on.
    int32_t active_children = 0;
    int64_t children_since_ns = 0;
    int64_t children_ns = 0;  // covered time up to the last moment no child was active
    // Atomic, written by every stepComplete of this phase: bits 0-31 hold last_step + 1,
    // kDirty says a step newer than the last one delivered is waiting, kFinished says
    // the phase is over (set under mu_; a step that sees it goes to the locked path).
    alignas(64) std::atomic<uint64_t> word{0};
    // Link of the dirty list; written by the thread that sets kDirty, before the push.
    std::atomic<PhaseState*> next_dirty{nullptr};
  };
  static constexpr uint64_t kStepMask = 0xffffffffu;
  static constexpr uint64_t kDirty = uint64_t{1} << 32;
  static constexpr uint64_t kFinished = uint64_t{1} << 33;
  static constexpr size_t kVersionBuckets = 64;
  // A version per name-hash bucket, bumped (under mu_) by every start and finish of a
  // phase whose name falls in it. Each on its own line: readers are every step.
  struct alignas(64) Version {
    std::atomic<uint64_t> value{0};
  };

  double SecondsAt(int64_t ns) const { return NsToSeconds(ns - start_ns_); }
  static uint32_t BucketOf(char const* name) noexcept;
  PhaseState* FindActive(char const* name) REQUIRES(mu_);
  // phaseStart's checks: counts the anomaly and returns true when the call is dropped
  // (after the build, or no name); a step count of 0 or less is counted and kept.
  bool DropsStart(char const* name, int32_t steps) REQUIRES(mu_);
  // The active phase `parent_name` names, or null (none named, or unknown: counted).
  PhaseState* ActiveParent(char const* parent_name) REQUIRES(mu_);
  // Closes active_[index]: its pending step, then its phase_finish. Needs room for two
  // events in pending_ and throws nothing else once `name` is copied.
  void FinishPhase(size_t index, int64_t now_ns) REQUIRES(mu_);
  // Raises `phase`'s step. False if the phase is finished (the caller takes the locked
  // path); true otherwise, also when the step is not newer than the last one.
  bool RaiseStep(PhaseState& phase, int32_t step) noexcept;
  void PushDirty(PhaseState& phase) noexcept;
  // The locked path of stepComplete: resolves the name, counts anomalies, fills the cache.
  void StepLocked(char const* name, int32_t step) noexcept EXCLUDES(mu_);
  void Push(Event&& event, bool wake) REQUIRES(mu_);
  // Dates the first stepComplete that returned false (once).
  void NoteCancelObserved() noexcept EXCLUDES(mu_);

  const Clock& clock_;
  const int64_t start_ns_;

  // Steps that raised nothing (a report not newer than the phase's step): progress for
  // the stall watch that the step counts do not show. Atomic: counted without mu_, on a
  // path the normal step never takes. Relaxed: only the count matters.
  std::atomic<uint64_t> unraised_steps_{0};
  // Tells this monitor's entries in the per-thread caches from a dead monitor's.
  const uint64_t serial_;
  Version versions_[kVersionBuckets];
  // Phases with an undelivered step (Treiber stack; the dispatcher takes it whole).
  std::atomic<PhaseState*> dirty_{nullptr};
  // Set once first_false_ns_ holds a value, so that later refused steps skip the lock.
  // Relaxed: a stale false only costs a lock that finds the value already there.
  std::atomic<bool> first_false_noted_{false};

  CancellationSource cancel_;

  mutable Mutex mu_;
  CondVar pending_cv_;
  // Protected by mu_:
  std::deque<PhaseState> phases_ GUARDED_BY(mu_);  // every phase of the build; stable
  std::vector<PhaseState*> active_ GUARDED_BY(mu_);  // in start order
  std::map<std::string, PhaseSummary, std::less<>> summaries_ GUARDED_BY(mu_);
  Anomalies anomalies_ GUARDED_BY(mu_);
  CacheUse cache_ GUARDED_BY(mu_);  // from build_start, repeated by build_finish
  std::vector<Event> pending_ GUARDED_BY(mu_);
  bool wake_ GUARDED_BY(mu_) = false;   // a must-deliver event is pending
  int64_t next_id_ GUARDED_BY(mu_) = 1;
  bool finished_ GUARDED_BY(mu_) = false;
  bool finish_taken_ GUARDED_BY(mu_) = false;
  BuildResult result_ GUARDED_BY(mu_);
  // When the first stepComplete returned false (no value: none did yet).
  std::optional<int64_t> first_false_ns_ GUARDED_BY(mu_);
  // The stall watch's view. Phase starts and finishes are dated when they happen; steps
  // by LastCallbackNs, when it sees the step total (finished phases' steps, locked
  // steps, active phases' steps, unraised_steps_) moved. The total only grows, and
  // grows with every step callback.
  int64_t last_phase_callback_ns_ GUARDED_BY(mu_);
  uint64_t finished_steps_ GUARDED_BY(mu_) = 0;
  uint64_t locked_steps_ GUARDED_BY(mu_) = 0;
  uint64_t seen_steps_ GUARDED_BY(mu_) = 0;
  int64_t last_step_seen_ns_ GUARDED_BY(mu_);
};

}  // namespace trtwatch
