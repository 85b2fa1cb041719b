// A WorkerLauncher that starts nothing: each worker follows a script — what it writes
// to stdout (in chunks that need not end on a line), to stderr, and how it ends — and
// the test reads back what the service asked of it (argv, Terminate, Kill, when).
//
// Completions are posted to the io_context, never run inside a call, as a real
// stream's are; a read that has nothing yet waits in the fake and holds no work, so
// `io.run()` returns once the manager waits on a silent worker (or a timer). No
// threads, no processes: a test's outcome depends on its script alone.
//
// Usage: FakeWorkerLauncher* fake = launcher.get(); BuildManager(..., std::move(launcher));
//        fake->Next(script);  manager.Submit(...);  io.run();  fake->worker(0)->signals ...
// Threading: the event loop's thread only, as WorkerLauncher's contract says.
#pragma once

#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "platform/worker_process.h"

namespace trtwatch::testing {

inline WorkerExit Exited(int code) {
  WorkerExit e;
  e.code = code;
  return e;
}

inline WorkerExit Signalled(int signal, const std::string& name) {
  WorkerExit e;
  e.signal = signal;
  e.signal_text = std::to_string(signal) + " (" + name + ")";
  e.terminated = name == "SIGTERM";
  return e;
}

struct FakeWorkerScript {
  std::vector<std::string> out;  // stdout, one chunk per read
  std::string err;               // stderr
  // After the chunks: it ends with `exit`, or it hangs (a long silent step) until
  // it is terminated or killed.
  bool hang = false;
  WorkerExit exit = Exited(0);
  // What Terminate does to a hanging worker.
  enum class OnTerminate {
    kIgnore,  // nothing: only Kill stops it
    kDie,     // it ends by the signal at once (no handler installed yet)
    kCancel,  // it writes `cancel_out` (its cooperative end) and exits with `cancel_exit`
  } on_terminate = OnTerminate::kIgnore;
  std::vector<std::string> cancel_out;
  WorkerExit cancel_exit = Exited(143);
};

// One fake worker, as the test sees it; it outlives the handle the manager holds.
struct FakeWorkerState {
  enum class Signal { kTerminate, kKill };
  struct Sent {
    Signal signal;
    std::chrono::steady_clock::time_point at;
  };

  WorkerSpec spec;
  int pid = 0;
  FakeWorkerScript script;
  std::vector<Sent> signals;         // every Terminate and Kill, in order
  bool polled_end = false;           // Poll reported its end
  bool dropped_before_end = false;   // the handle went before its end was polled (a real one kills)

  // The streams: what is left to deliver, and whether the worker still writes.
  std::deque<std::string> out;
  std::string err;
  std::optional<WorkerExit> exit;  // set when it ends: its streams close then
  bool handle_gone = false;
};

class FakeWorker final : public WorkerProcess {
 public:
  FakeWorker(boost::asio::io_context& io, std::shared_ptr<FakeWorkerState> state) : io_(io), s_(std::move(state)) {
    s_->out.assign(s_->script.out.begin(), s_->script.out.end());
    s_->err = s_->script.err;
    MaybeEnd();
  }
  ~FakeWorker() override {
    s_->handle_gone = true;
    if (!s_->polled_end) s_->dropped_before_end = true;
  }

  int pid() const override { return s_->pid; }

  void ReadStdout(std::span<char> buffer, ReadHandler handler) override {
    out_read_ = Pending{buffer, std::move(handler)};
    Pump();
  }
  void ReadStderr(std::span<char> buffer, ReadHandler handler) override {
    err_read_ = Pending{buffer, std::move(handler)};
    Pump();
  }
  std::string ReadStderrNow(size_t max_bytes) override {
    std::string text = s_->err.substr(0, max_bytes);
    s_->err.erase(0, text.size());
    return text;
  }

  void Terminate() override {
    s_->signals.push_back({FakeWorkerState::Signal::kTerminate, std::chrono::steady_clock::now()});
    if (s_->exit || !s_->script.hang) return;
    switch (s_->script.on_terminate) {
      case FakeWorkerScript::OnTerminate::kIgnore:
        return;
      case FakeWorkerScript::OnTerminate::kDie:
        End(Signalled(15, "SIGTERM"));
        break;
      case FakeWorkerScript::OnTerminate::kCancel:
        s_->out.insert(s_->out.end(), s_->script.cancel_out.begin(), s_->script.cancel_out.end());
        s_->script.hang = false;
        s_->script.exit = s_->script.cancel_exit;
        MaybeEnd();
        break;
    }
    Pump();
  }
  void Kill() override {
    s_->signals.push_back({FakeWorkerState::Signal::kKill, std::chrono::steady_clock::now()});
    if (s_->exit) return;
    s_->out.clear();  // what it had not written yet, it never will
    End(Signalled(9, "SIGKILL"));
    Pump();
  }

  std::optional<WorkerExit> Poll() override {
    if (s_->exit) s_->polled_end = true;
    return s_->exit;
  }

 private:
  struct Pending {
    std::span<char> buffer;
    ReadHandler handler;
  };

  void End(const WorkerExit& exit) {
    s_->exit = exit;
    s_->out.clear();
  }
  // Once it has written everything, a worker that does not hang ends.
  void MaybeEnd() {
    if (!s_->exit && !s_->script.hang && s_->out.empty()) s_->exit = s_->script.exit;
  }

  // Completes each waiting read that has data or whose stream is over.
  void Pump() {
    if (out_read_ && (!s_->out.empty() || s_->exit)) {
      std::string chunk;
      if (!s_->out.empty()) {
        chunk = std::move(s_->out.front());
        s_->out.pop_front();
        // A chunk longer than the buffer is read in parts, as a pipe's would be.
        if (chunk.size() > out_read_->buffer.size()) {
          s_->out.push_front(chunk.substr(out_read_->buffer.size()));
          chunk.resize(out_read_->buffer.size());
        }
        MaybeEnd();
      }
      Complete(*std::exchange(out_read_, std::nullopt), std::move(chunk));
    }
    if (err_read_ && (!s_->err.empty() || s_->exit)) {
      std::string chunk = ReadStderrNow(err_read_->buffer.size());
      Complete(*std::exchange(err_read_, std::nullopt), std::move(chunk));
    }
  }

  // An empty chunk is the stream's end. Nothing is written to the buffer once the
  // handle is gone (its owner may have freed it).
  void Complete(Pending read, std::string chunk) {
    boost::asio::post(io_, [state = s_, read = std::move(read), chunk = std::move(chunk)] {
      if (state->handle_gone || chunk.empty()) {
        read.handler(0, true);
        return;
      }
      std::memcpy(read.buffer.data(), chunk.data(), chunk.size());
      read.handler(chunk.size(), false);
    });
  }

  boost::asio::io_context& io_;
  const std::shared_ptr<FakeWorkerState> s_;
  std::optional<Pending> out_read_;
  std::optional<Pending> err_read_;
};

class FakeWorkerLauncher final : public WorkerLauncher {
 public:
  explicit FakeWorkerLauncher(boost::asio::io_context& io) : io_(io) {}

  // The script of the next worker started (then the next one's, ...); a worker with
  // no script left exits 0 at once, writing nothing.
  void Next(FakeWorkerScript script) { scripts_.push_back(std::move(script)); }
  // The next Start fails with this message.
  void FailNextStart(std::string error) { start_error_ = std::move(error); }

  std::unique_ptr<WorkerProcess> Start(const WorkerSpec& spec, std::string* error) override {
    if (start_error_) {
      *error = *std::exchange(start_error_, std::nullopt);
      return nullptr;
    }
    auto state = std::make_shared<FakeWorkerState>();
    state->spec = spec;
    state->pid = next_pid_++;
    if (!scripts_.empty()) {
      state->script = std::move(scripts_.front());
      scripts_.pop_front();
    }
    workers_.push_back(state);
    return std::make_unique<FakeWorker>(io_, state);
  }
  void KillLeftover(int pid) override { leftovers_.push_back(pid); }

  size_t started() const { return workers_.size(); }
  // The i-th worker started; the test may keep it past the launcher.
  std::shared_ptr<FakeWorkerState> worker(size_t i) { return workers_.at(i); }
  const std::vector<int>& leftovers() const { return leftovers_; }

 private:
  boost::asio::io_context& io_;
  std::deque<FakeWorkerScript> scripts_;
  std::optional<std::string> start_error_;
  std::vector<std::shared_ptr<FakeWorkerState>> workers_;
  std::vector<int> leftovers_;
  int next_pid_ = 40000;
};

}  // namespace trtwatch::testing
