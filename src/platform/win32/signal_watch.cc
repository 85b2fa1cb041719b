#include "platform/signal_watch.h"

#include <windows.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

// Windows has no signals for these: the console calls a control handler, on a thread
// of its own, for Ctrl+C, Ctrl+Break, the window being closed, logoff and shutdown.
//  - CTRL_C_EVENT, CTRL_BREAK_EVENT -> kInterrupt (the Ctrl+C path: a second forces).
//  - CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT -> kHangup (cancel). For
//    these Windows ends the process as soon as the handler returns, or after about
//    5 s (its close timeout) if it has not: so the handler waits, giving the build
//    that window to cancel and finish; the process's normal exit ends the wait.
// Terminal stop/continue/resize do not exist here (the view re-reads the console's
// size every frame).

namespace trtwatch {

namespace {

// How long the close/logoff/shutdown handler holds the process open. Windows' own
// limit is about 5 s; past it the process is killed anyway.
constexpr DWORD kCloseWindowMs = 10'000;

// The watch's queue, shared with the console handler. Leaked on purpose: a handler
// call may still be running when a SignalWatch goes away, and at process exit.
struct Queue {
  std::mutex mu;
  std::condition_variable cv;
  bool watching = false;               // guarded by mu: a SignalWatch exists
  bool stop = false;                   // guarded by mu: its thread should return
  std::deque<ProcessSignal> pending;   // guarded by mu
};

Queue& TheQueue() {
  static Queue* queue = new Queue;
  return *queue;
}

BOOL WINAPI OnConsoleControl(DWORD type) {
  ProcessSignal signal;
  switch (type) {
    case CTRL_C_EVENT:
    case CTRL_BREAK_EVENT:
      signal = ProcessSignal::kInterrupt;
      break;
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT:
      signal = ProcessSignal::kHangup;
      break;
    default:
      return FALSE;
  }
  Queue& queue = TheQueue();
  {
    std::lock_guard<std::mutex> lock(queue.mu);
    if (!queue.watching) return FALSE;  // the default: end the process
    queue.pending.push_back(signal);
  }
  queue.cv.notify_all();
  if (signal == ProcessSignal::kHangup) Sleep(kCloseWindowMs);
  return TRUE;
}

}  // namespace

struct SignalWatch::Impl {
  Handler handler;
  std::thread thread;

  void Run() {
    Queue& queue = TheQueue();
    std::unique_lock<std::mutex> lock(queue.mu);
    for (;;) {
      queue.cv.wait(lock, [&] { return queue.stop || !queue.pending.empty(); });
      if (queue.stop) return;
      const ProcessSignal signal = queue.pending.front();
      queue.pending.pop_front();
      lock.unlock();
      handler(signal);
      lock.lock();
    }
  }
};

SignalWatch::SignalWatch(Handler handler, bool /*watch_terminal_signals*/) : impl_(new Impl) {
  impl_->handler = std::move(handler);
  Queue& queue = TheQueue();
  {
    std::lock_guard<std::mutex> lock(queue.mu);
    queue.watching = true;
    queue.stop = false;
    queue.pending.clear();
  }
  impl_->thread = std::thread([impl = impl_.get()] { impl->Run(); });
  // A process started with Ctrl+C ignored (CREATE_NEW_PROCESS_GROUP) would never see
  // CTRL_C_EVENT: take it back, as a POSIX program catching SIGINT does.
  SetConsoleCtrlHandler(nullptr, FALSE);
  SetConsoleCtrlHandler(OnConsoleControl, TRUE);
}

SignalWatch::~SignalWatch() {
  SetConsoleCtrlHandler(OnConsoleControl, FALSE);
  Queue& queue = TheQueue();
  {
    std::lock_guard<std::mutex> lock(queue.mu);
    queue.watching = false;
    queue.stop = true;
  }
  queue.cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void SignalWatch::StopSelf() {}  // no job control on Windows

const char* SignalName(ProcessSignal signal) {
  switch (signal) {
    case ProcessSignal::kInterrupt: return "Ctrl+C";
    case ProcessSignal::kTerminate: return "termination";
    case ProcessSignal::kHangup: return "console closed, logoff or shutdown";
    default: return "console event";
  }
}

}  // namespace trtwatch
