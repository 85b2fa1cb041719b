// Monitor: the object TensorRT's progress callbacks land on.
//
// Threading contract:
//  - phaseStart / stepComplete / phaseFinish have TensorRT's exact signatures and may be
//    called from any number of threads at once. They never block on I/O, never throw,
//    and stepComplete does not allocate once its phase exists: it takes one short lock,
//    updates the phase, and checks the cancellation flag with one atomic load.
//  - Events are not delivered from the callbacks. They wait in a pending batch that a
//    single Dispatcher takes (TakePending). Within a batch, step updates of one phase
//    coalesce in place (latest wins); every other event is appended.
//  - Lifecycle calls (BuildStarted, Log, RequestCancel, ReportStall, BuildReturned) are
//    thread-safe too.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
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
  // The backend's build call returned. Closes phases left open, concludes the status,
  // emits build_finish and returns the result. Later calls return the same result.
  BuildResult BuildReturned(const BuildOutcome& outcome);

  bool IsCancelRequested() const noexcept { return cancel_.IsRequested(); }
  const CancellationSource& cancellation() const { return cancel_; }
  const Clock& clock() const { return clock_; }
  // Monotonic time of the latest progress callback (or of construction).
  int64_t last_callback_ns() const { return last_callback_ns_.load(std::memory_order_relaxed); }
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
  struct ActivePhase {
    int64_t id = kNoPhase;
    int64_t parent = kNoPhase;
    std::string name;
    int32_t total = 0;
    int32_t last_step = -1;
    int64_t start_ns = 0;
    std::thread::id thread;  // the thread that started it
    bool name_shared = false;  // another phase of this name was active alongside it
    // Where this phase's step event sits in the pending batch, if it is there.
    uint64_t pending_batch = UINT64_MAX;
    size_t pending_index = 0;
  };

  // Stamps the time of a progress callback (for the stall watch) and returns it.
  int64_t NoteCallback() noexcept;
  double SecondsAt(int64_t ns) const { return NsToSeconds(ns - start_ns_); }
  ActivePhase* FindActive(char const* name) REQUIRES(mu_);
  void FinishPhase(std::vector<ActivePhase>::iterator it, int64_t now_ns) REQUIRES(mu_);
  void QueueStep(ActivePhase& phase, int64_t now_ns) REQUIRES(mu_);
  void Push(Event&& event, bool wake) REQUIRES(mu_);
  // Dates the first stepComplete that returned false (once).
  void NoteCancelObserved() noexcept EXCLUDES(mu_);

  const Clock& clock_;
  const int64_t start_ns_;

  // Atomic rather than guarded: written on every callback, read by the stall watch
  // without taking mu_. Relaxed: only the value matters, it orders nothing.
  std::atomic<int64_t> last_callback_ns_;
  // Set once first_false_ns_ holds a value, so that later refused steps skip the lock.
  // Relaxed: a stale false only costs a lock that finds the value already there.
  std::atomic<bool> first_false_noted_{false};

  CancellationSource cancel_;

  mutable Mutex mu_;
  CondVar pending_cv_;
  // Protected by mu_:
  std::vector<ActivePhase> active_ GUARDED_BY(mu_);  // in start order
  std::map<std::string, PhaseSummary, std::less<>> summaries_ GUARDED_BY(mu_);
  Anomalies anomalies_ GUARDED_BY(mu_);
  std::vector<Event> pending_ GUARDED_BY(mu_);
  uint64_t batch_ GUARDED_BY(mu_) = 0;  // increments on every TakePending
  bool wake_ GUARDED_BY(mu_) = false;   // a must-deliver event is pending
  int64_t next_id_ GUARDED_BY(mu_) = 1;
  bool finished_ GUARDED_BY(mu_) = false;
  bool finish_taken_ GUARDED_BY(mu_) = false;
  BuildResult result_ GUARDED_BY(mu_);
  // When the first stepComplete returned false (no value: none did yet).
  std::optional<int64_t> first_false_ns_ GUARDED_BY(mu_);
};

}  // namespace trtwatch
