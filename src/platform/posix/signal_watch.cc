#include "platform/signal_watch.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <vector>

namespace trtwatch {

namespace {

// The write end of the self-pipe, for the handlers. Atomic by construction (a plain
// int written before the handlers are installed and read only by them).
volatile sig_atomic_t g_wake_fd = -1;

void OnSignal(int signo) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(signo);
  if (g_wake_fd >= 0) (void)!write(g_wake_fd, &byte, 1);
  errno = saved;
}

bool Translate(int signo, ProcessSignal* out) {
  switch (signo) {
    case SIGINT: *out = ProcessSignal::kInterrupt; return true;
    case SIGTERM: *out = ProcessSignal::kTerminate; return true;
    case SIGHUP: *out = ProcessSignal::kHangup; return true;
    case SIGTSTP: *out = ProcessSignal::kTerminalStop; return true;
    case SIGCONT: *out = ProcessSignal::kContinue; return true;
    case SIGWINCH: *out = ProcessSignal::kResize; return true;
    default: return false;
  }
}

}  // namespace

struct SignalWatch::Impl {
  Handler handler;
  int pipe_fds[2] = {-1, -1};
  std::vector<std::pair<int, struct sigaction>> previous;
  std::thread thread;

  void Run() {
    unsigned char byte = 0;
    for (;;) {
      const ssize_t n = read(pipe_fds[0], &byte, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || byte == 0) return;  // 0: shutdown
      ProcessSignal signal;
      if (Translate(byte, &signal)) handler(signal);
    }
  }
};

SignalWatch::SignalWatch(Handler handler, bool watch_terminal_signals) : impl_(new Impl) {
  impl_->handler = std::move(handler);
  if (pipe2(impl_->pipe_fds, O_CLOEXEC) != 0) return;
  g_wake_fd = impl_->pipe_fds[1];
  std::vector<int> signals = {SIGINT, SIGTERM, SIGHUP};
  if (watch_terminal_signals) signals.insert(signals.end(), {SIGTSTP, SIGCONT, SIGWINCH});
  for (int signo : signals) {
    struct sigaction action = {};
    action.sa_handler = OnSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    struct sigaction old = {};
    if (sigaction(signo, &action, &old) == 0) impl_->previous.emplace_back(signo, old);
  }
  impl_->thread = std::thread([impl = impl_.get()] { impl->Run(); });
}

SignalWatch::~SignalWatch() {
  for (auto& [signo, old] : impl_->previous) sigaction(signo, &old, nullptr);
  if (impl_->pipe_fds[1] >= 0) {
    const unsigned char stop = 0;
    (void)!write(impl_->pipe_fds[1], &stop, 1);
  }
  if (impl_->thread.joinable()) impl_->thread.join();
  g_wake_fd = -1;
  for (int fd : impl_->pipe_fds) {
    if (fd >= 0) close(fd);
  }
}

void SignalWatch::StopSelf() {
  // SIGTSTP is caught here, so stop with SIGSTOP, which cannot be; SIGCONT resumes.
  raise(SIGSTOP);
}

const char* SignalName(ProcessSignal signal) {
  switch (signal) {
    case ProcessSignal::kInterrupt: return "SIGINT";
    case ProcessSignal::kTerminate: return "SIGTERM";
    case ProcessSignal::kHangup: return "SIGHUP";
    case ProcessSignal::kTerminalStop: return "SIGTSTP";
    case ProcessSignal::kContinue: return "SIGCONT";
    case ProcessSignal::kResize: return "SIGWINCH";
  }
  return "signal";
}

}  // namespace trtwatch
