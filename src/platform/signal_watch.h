// SignalWatch: process signals turned into calls on an ordinary thread.
//
// The signal handlers only write the signal's number to a pipe (async-signal-safe);
// the watch's own thread reads it and calls the handler, where locking, allocating
// and printing are allowed. One SignalWatch at a time per process. The platform's
// implementation is chosen by CMake (platform/posix/, platform/win32/: console
// control events there, mapped as docs/windows.md says).
#pragma once

#include <functional>
#include <memory>

namespace trtwatch {

enum class ProcessSignal { kInterrupt, kTerminate, kHangup, kTerminalStop, kContinue, kResize };

class SignalWatch {
 public:
  using Handler = std::function<void(ProcessSignal)>;
  // Starts watching. Terminal stop/continue/resize are watched only if asked for:
  // a program that does not draw on a terminal keeps their default behaviour.
  SignalWatch(Handler handler, bool watch_terminal_signals);
  ~SignalWatch();  // restores the previous dispositions
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // Stops this process now as SIGTSTP would (for use from the handler, after the
  // terminal was restored); returns once it is continued.
  static void StopSelf();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// How the person knows the event, for messages: "SIGINT"; on Windows "Ctrl+C".
const char* SignalName(ProcessSignal signal);

}  // namespace trtwatch
