// PythonWatch: a trtwatch::Watch owned by Python, with the GIL rules that keep it
// from deadlocking against its own delivery threads.
//
//  - The callbacks (phase_start, step_complete, phase_finish) run under the GIL, as
//    TensorRT's binding calls a Python monitor: they only record into the core.
//  - finish(), simulate() and the destructor release the GIL: they wait for the
//    delivery threads, which take the GIL to call Python consumers.
//  - Failures inside the Python monitor are counted here (note_monitor_failure) and
//    shown in the stream as a warning, never turned into a cancel.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <trtwatch/simulate.h>
#include <trtwatch/watch.h>

#include "python_sink.h"

namespace trtwatch::python {

class PythonWatch {
 public:
  // `consumers`: Python callables, each fed the stream by a sink of its own.
  PythonWatch(WatchOptions options, const std::vector<py::object>& consumers);
  ~PythonWatch();
  PythonWatch(const PythonWatch&) = delete;
  PythonWatch& operator=(const PythonWatch&) = delete;

  Watch& watch() { return *watch_; }

  void Start();
  BuildResult Finish(bool engine_built, std::string error);
  // A whole build the library drives (trtwatch::Simulate, trtwatch::Replay), run with
  // the GIL released so that Python's consumers and other threads go on.
  BuildResult RunBuild(const std::function<BuildResult(Watch&)>& build);

  // A failure inside the Python monitor: counted, and the first one logged into the
  // stream as a warning.
  void NoteMonitorFailure(const std::string& what);
  int64_t monitor_failures() const { return monitor_failures_.count(); }
  int64_t callback_errors() const { return callback_errors_.count(); }

  bool started() const { return started_; }
  const std::optional<BuildResult>& result() const { return result_; }

 private:
  ErrorCount monitor_failures_;
  ErrorCount callback_errors_;
  std::unique_ptr<Watch> watch_;  // after the counts: its sinks point at callback_errors_
  bool started_ = false;          // these two: the owning Python thread only (GIL)
  std::optional<BuildResult> result_;
};

}  // namespace trtwatch::python
