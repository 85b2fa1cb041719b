// Executor: where builds run, as the build manager sees it. Each build is one worker,
// `trtwatch build … --progress json`, that an executor starts somewhere; the manager
// reads its event stream and its diagnostics, asks it to stop (cooperatively first,
// then by force) and polls for its end. One file pair per executor in this folder:
// local_executor.h runs workers as processes of this host (the default); an executor
// for a cluster scheduler runs them as its jobs.
//
// Threading: an executor and its executions are used on the one thread that runs the
// event loop they were made for; read handlers are called on that thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "builds/build_record.h"     // BuildState, JobPlace
#include "builds/gpu_routing.h"      // GpuNeed
#include "platform/worker_process.h"  // WorkerExit

namespace trtwatch::builds {

// Where a worker runs: what the record keeps, and what a later service process needs
// to find a worker an earlier one left behind.
struct WorkerPlace {
  int pid = 0;  // a local worker's process (and process group) id
  JobPlace job;  // a scheduler's job (its id, its stream file, where it runs)
};

// What a build is, for an executor that names or bounds its worker by it.
struct WorkerTask {
  std::string build_id;
  std::optional<double> timeout_seconds;  // the request's timeout; none: no limit
  double cancel_grace_seconds = 0;        // the service's cancel grace
  GpuNeed gpu;                            // the GPU the request asks for; empty: any
  bool builds_on_gpu = false;             // a real build (a simulated one needs no device)
};

// Whether an executor can give a build the GPU it asks for.
struct GpuCheck {
  std::string error;  // empty: it can; else why not, naming what it can give
  bool accepted() const { return error.empty(); }
};

// How the stream ended, for an executor's own account of the end (Execution::Judge).
struct StreamEnd {
  bool finished = false;                    // the stream has its build_finish ...
  BuildState state = BuildState::kFailed;   // ... with this status
  bool cancel_asked = false;                // the service asked the worker to stop
};
// An end the executor knows better than the stream: the state, a distinct reason and
// the error the record keeps.
struct EndVerdict {
  BuildState state = BuildState::kFailed;
  std::string reason;
  std::string error;
};

// One worker, from its start to its end.
class Execution {
 public:
  // `handler(n, closed)` runs once: n bytes were read into the buffer; `closed` when
  // the stream is over (then nothing more comes). One read per stream at a time.
  using ReadHandler = std::function<void(size_t n, bool closed)>;

  // Dropped before its end was polled: the worker is stopped by force.
  virtual ~Execution() = default;

  virtual WorkerPlace place() const = 0;
  // The event stream (JSON lines of docs/events.md) and the worker's diagnostics.
  virtual void ReadEvents(std::span<char> buffer, ReadHandler handler) = 0;
  virtual void ReadDiagnostics(std::span<char> buffer, ReadHandler handler) = 0;
  // What the diagnostics hold now, up to `max_bytes`, without waiting: its last words.
  virtual std::string DiagnosticsNow(size_t max_bytes) = 0;
  // Cooperative: the worker cancels at TensorRT's next step and reports it.
  virtual void RequestStop() = 0;
  // Now, whatever it is doing.
  virtual void ForceStop() = 0;
  // Its end, once it has ended (the same answer every time after that); never waits.
  virtual std::optional<WorkerExit> Poll() = 0;
  // `changed` runs on the event loop each time place() changes (a job submitted,
  // scheduled on a node, its state or pending reason moved); the default never does.
  virtual void WatchPlace(std::function<void()> changed) { (void)changed; }
  // Once ended: a verdict that replaces the stream's account (a scheduler killed the
  // job), or none (the default).
  virtual std::optional<EndVerdict> Judge(const StreamEnd& end) {
    (void)end;
    return std::nullopt;
  }
  // Whether Judge may replace the account of a stream that reported no success (a
  // scheduler's own end: its time limit reaches the worker as a SIGTERM, reported as a
  // cancel). The manager holds such a build_finish until the verdict, so that the log,
  // its followers and the record say the same. The default: never.
  virtual bool JudgesUnsuccessfulEnds() const { return false; }
};

struct ExecutionStart {
  std::unique_ptr<Execution> execution;  // null when it could not start
  std::string error;                     // then: why, and what to do
};

class Executor {
 public:
  virtual ~Executor() = default;
  // Whether a build that asks for `need` (never empty) can run here: the request is
  // refused at once, not queued, when it cannot.
  virtual GpuCheck CheckGpu(const GpuNeed& need) = 0;
  // Starts a worker for `task` with trtwatch's arguments `args` (after the program's name).
  virtual ExecutionStart Start(const WorkerTask& task, const std::vector<std::string>& args) = 0;
  // A worker an earlier service process left at `place` (it was killed or crashed):
  // stopped, if it still runs.
  virtual void StopLeftover(const WorkerPlace& place) = 0;
  // The same worker followed again where its executor can (a cluster's job outlives
  // the service that submitted it): its stream is read from its start. Null: it cannot
  // (the default; then StopLeftover).
  virtual std::unique_ptr<Execution> Reattach(const WorkerPlace& place) {
    (void)place;
    return nullptr;
  }
  // Whether workers run on by design when the service stops (jobs on a cluster): then
  // a stopping service neither cancels nor waits for them, and follows them again at
  // its next start.
  virtual bool WorkersOutliveService() const { return false; }
};

}  // namespace trtwatch::builds
