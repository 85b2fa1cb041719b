// WorkerLauncher: starts the build service's worker processes; WorkerProcess: one of
// them, as the service sees it — two output streams to read, two ways to stop it and
// a poll for its end.
//
// A worker runs in a process group of its own, so that stopping it reaches everything
// it started. Terminate asks it to stop (it may finish cooperatively: SIGTERM on
// POSIX); Kill stops it now (SIGKILL). Neither waits; Poll says when it has exited.
// Its stdin is empty and it inherits no other descriptor of the service.
//
// Tests replace the launcher with a fake that scripts a worker's output and exit
// (tests/support/fake_worker_launcher.h); the production one is
// NewWorkerLauncher (platform/posix/worker_process.cc, built with the service).
//
// Threading: a launcher and its processes are used on the one thread that runs the
// event loop they were made for; read handlers are called on that thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace trtwatch {

struct WorkerSpec {
  std::string exe;                // the program to run
  std::vector<std::string> argv;  // argv[0] first
  std::optional<std::vector<std::string>> env;  // "NAME=value"; unset: the service's own
  std::string cwd;                              // empty: the service's own
};

// How a worker ended.
struct WorkerExit {
  std::optional<int> code;    // it exited with this code ...
  std::optional<int> signal;  // ... or was ended by this signal (its number, as records keep it)
  std::string signal_text;    // "9 (SIGKILL)", for messages
  bool terminated = false;    // ended by the signal Terminate sends, not handled
  // Neither code nor signal: the status could not be read.
};

class WorkerProcess {
 public:
  // A handle dropped before its worker's end was polled kills the group and reaps it,
  // so that no worker outlives the service unnoticed and none stays a zombie.
  virtual ~WorkerProcess() = default;

  virtual int pid() const = 0;  // also its process group's id

  // Reads some of its stdout (stderr) into `buffer`; `handler(n, closed)` runs once,
  // on the event loop: n bytes were read; `closed` when the stream is over (its end,
  // an error, or this handle was destroyed: then nothing was written to `buffer`).
  // One read per stream at a time.
  using ReadHandler = std::function<void(size_t n, bool closed)>;
  virtual void ReadStdout(std::span<char> buffer, ReadHandler handler) = 0;
  virtual void ReadStderr(std::span<char> buffer, ReadHandler handler) = 0;
  // What stderr holds now, up to `max_bytes`, without waiting: its last words, once it
  // has exited (a ReadStderr still under way gets nothing of what this takes).
  virtual std::string ReadStderrNow(size_t max_bytes) = 0;

  // Signals to the group; no-ops once the worker's end was polled.
  virtual void Terminate() = 0;
  virtual void Kill() = 0;

  // Its end, if it has exited (the same answer every time after that); never waits.
  virtual std::optional<WorkerExit> Poll() = 0;
};

class WorkerLauncher {
 public:
  virtual ~WorkerLauncher() = default;
  // Null, with a message that says why (and what to do) in `*error`, if it cannot start.
  virtual std::unique_ptr<WorkerProcess> Start(const WorkerSpec& spec, std::string* error) = 0;
  // A worker left behind by an earlier service process (killed, crashed) with this
  // pid: killed with its group if that pid still leads a group running
  // `trtwatch build` (the pid may have been reused since).
  virtual void KillLeftover(int pid) = 0;
};

// The platform's launcher, for workers whose streams are read on `io`.
std::unique_ptr<WorkerLauncher> NewWorkerLauncher(boost::asio::io_context& io);

}  // namespace trtwatch
