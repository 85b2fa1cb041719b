#include "runner/process_control.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <trtwatch/result.h>

#include "platform/terminal.h"

namespace trtwatch {

ProcessControl::ProcessControl(Monitor& monitor, TtySink* view, ProcessControlOptions options)
    : monitor_(monitor), view_(view), options_(std::move(options)) {
  if (options_.kill_after) kill_timer_ = std::thread([this] { RunKillTimer(); });
  if (options_.watch_signals) {
    signals_ = std::make_unique<SignalWatch>([this](ProcessSignal signal) { OnSignal(signal); },
                                             /*watch_terminal_signals=*/view_ != nullptr);
  }
}

ProcessControl::~ProcessControl() {
  signals_.reset();  // no handler runs after this
  BuildReturned();
  if (kill_timer_.joinable()) kill_timer_.join();
}

void ProcessControl::BuildReturned() {
  {
    MutexLock lock(&mu_);
    returned_ = true;
  }
  cv_.SignalAll();
}

std::optional<ProcessSignal> ProcessControl::first_signal() const {
  const int signal = first_signal_.load();
  return signal < 0 ? std::nullopt : std::optional(static_cast<ProcessSignal>(signal));
}

void ProcessControl::Hint(const std::string& hint) {
  if (view_ != nullptr) {
    view_->SetCancelHint(hint);
  } else {
    std::fprintf(stderr, "trtwatch: cancelling - waiting for the builder to finish its current step; %s\n",
                 hint.c_str());
    std::fflush(stderr);
  }
}

void ProcessControl::OnSignal(ProcessSignal signal) {
  switch (signal) {
    case ProcessSignal::kInterrupt: {
      const bool first = interrupts_.fetch_add(1) == 0;
      if (!first || monitor_.IsCancelRequested()) {
        ForceExit(exit_code::kInterrupted,
                  "forced exit on Ctrl+C; the builder had not stopped yet (exit 130)");
      }
      int none = -1;
      first_signal_.compare_exchange_strong(none, static_cast<int>(signal));
      monitor_.RequestCancel(CancelReason::kSignal, std::string("interrupted (") + SignalName(signal) + ")");
      Hint("press Ctrl+C again to force");
      return;
    }
    case ProcessSignal::kTerminate:
    case ProcessSignal::kHangup: {
      int none = -1;
      if (!first_signal_.compare_exchange_strong(none, static_cast<int>(signal))) return;
      const char* what = signal == ProcessSignal::kTerminate ? "terminated (" : "hung up (";
      if (monitor_.RequestCancel(CancelReason::kSignal, what + std::string(SignalName(signal)) + ")")) {
        Hint("press Ctrl+C to force");
      }
      return;
    }
    case ProcessSignal::kTerminalStop:
      if (view_ != nullptr) view_->Suspend();
      SignalWatch::StopSelf();
      if (view_ != nullptr) view_->Resume();
      return;
    case ProcessSignal::kContinue:
      if (view_ != nullptr) view_->Resume();
      return;
    case ProcessSignal::kResize:
      if (view_ != nullptr) view_->Redraw();
      return;
  }
}

void ProcessControl::RunKillTimer() {
  const double limit = *options_.kill_after;
  MutexLock lock(&mu_);
  while (!returned_) {
    std::chrono::nanoseconds wait = std::chrono::milliseconds(50);
    if (monitor_.IsCancelRequested()) {
      const int64_t waited_ns = monitor_.clock().NowNs() - monitor_.cancellation().requested_at_ns();
      const int64_t left_ns = static_cast<int64_t>(limit * 1e9) - waited_ns;
      if (left_ns <= 0) {
        ForceExit(exit_code::kKilled, "the builder did not stop within " + options_.kill_after_text +
                                          " of the cancel request (" + monitor_.cancellation().message() +
                                          "); exiting without waiting for it (exit 137)");
      }
      wait = std::min(wait, std::chrono::nanoseconds(left_ns));
    }
    cv_.WaitFor(&mu_, wait);
  }
}

void ProcessControl::ForceExit(int code, const std::string& message) {
  if (exiting_.exchange(true)) {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // the other caller exits
  }
  if (view_ != nullptr) view_->Abandon();
  RestoreConsole();  // _Exit runs no destructors
  std::fprintf(stderr, "trtwatch: %s\n", message.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  std::_Exit(code);
}

}  // namespace trtwatch
