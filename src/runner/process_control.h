// ProcessControl: what signals and the --kill-after deadline do to a running build.
//
//  - First Ctrl+C (SIGINT): cooperative cancel (reason signal) and a hint that a
//    second Ctrl+C forces. A Ctrl+C while a cancel is already under way (a second one,
//    or after a timeout/stall/SIGTERM cancel): restore the terminal and exit 130 now.
//  - SIGTERM, SIGHUP: cooperative cancel; the build's exit code is 143.
//  - SIGTSTP: restore the terminal, then stop; SIGCONT: draw again. SIGWINCH: re-lay.
//    (Watched only when a live view draws on the terminal.)
//  - --kill-after DUR: when a cancel request (any reason) is DUR old and the builder
//    has not returned, restore the terminal and exit 137 with a message.
//
// Signals are watched only with `watch_signals` (the library makes it opt-in).
//
// Threading: signal handlers only write to SignalWatch's pipe; everything here runs on
// the SignalWatch thread or this object's timer thread. A forced exit calls _Exit
// after restoring the terminal: the builder may be stuck inside a step, so nothing
// waits for it. Construct before the build starts, call BuildReturned when the
// backend's build call returned.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "core/monitor.h"
#include "core/mutex.h"
#include "platform/signal_watch.h"
#include "sinks/tty_sink.h"

namespace trtwatch {

struct ProcessControlOptions {
  bool watch_signals = true;         // Ctrl+C, SIGTERM, SIGHUP (and terminal signals with a view)
  std::optional<double> kill_after;  // seconds
  std::string kill_after_text;       // how the user set it, for the message: "--kill-after 5s"
};

class ProcessControl {
 public:
  // `view` may be null (no live view); it must outlive this object.
  ProcessControl(Monitor& monitor, TtySink* view, ProcessControlOptions options);
  ~ProcessControl();
  ProcessControl(const ProcessControl&) = delete;
  ProcessControl& operator=(const ProcessControl&) = delete;

  // The backend's build call returned: --kill-after no longer applies.
  void BuildReturned() EXCLUDES(mu_);
  // The first terminating signal that arrived, if any.
  std::optional<ProcessSignal> first_signal() const;

 private:
  void OnSignal(ProcessSignal signal);
  void RunKillTimer() EXCLUDES(mu_);
  [[noreturn]] void ForceExit(int code, const std::string& message);
  // Tells the person how to stop waiting: in the view, or on stderr without one.
  void Hint(const std::string& hint);

  Monitor& monitor_;
  TtySink* const view_;
  const ProcessControlOptions options_;

  // Atomics: written by the signal thread, read by the build thread after the build.
  std::atomic<int> first_signal_{-1};  // ProcessSignal value, -1: none
  std::atomic<int> interrupts_{0};     // Ctrl+C presses so far
  std::atomic<bool> exiting_{false};   // a forced exit is under way (one wins)

  Mutex mu_;
  CondVar cv_;
  bool returned_ GUARDED_BY(mu_) = false;

  std::thread kill_timer_;
  std::unique_ptr<SignalWatch> signals_;  // created last: its thread calls OnSignal
};

}  // namespace trtwatch
