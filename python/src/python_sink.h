// PythonSink: a Python callable as a consumer of the event stream.
//
// It is an ordinary Sink, so it runs on a delivery thread of its own, never on
// TensorRT's threads; a slow callable gets coalesced steps and never slows the build
// (the core's sink channel does that). Each event reaches the callable as a dict in
// the protocol's JSON shape (docs/events.md). An exception from the callable is
// reported once as an unraisable exception, counted, and delivery goes on: a bug in
// user code never cancels or breaks the build.
//
// GIL: OnEvent and Close take it; the sink must be destroyed and the watch finished
// with the GIL released by the calling thread (PythonWatch does both).
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <trtwatch/sink.h>

namespace trtwatch::python {

namespace py = pybind11;

// Exceptions raised by user code that trtwatch caught: counted, the first reported.
class ErrorCount {
 public:
  // Returns true for the first error (the one to report).
  bool Note() noexcept { return count_.fetch_add(1, std::memory_order_relaxed) == 0; }
  int64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> count_{0};  // atomic: delivery threads and monitor threads count
};

class PythonSink final : public Sink {
 public:
  // `consumer` is called with each event's dict; when it has a `close` method, that is
  // called after the last event. `errors` outlives the sink.
  PythonSink(py::object consumer, ErrorCount* errors);
  ~PythonSink() override;

  void OnEvent(const Event& event) override;
  void Close() override;

 private:
  // Calls `fn` under the GIL unless the interpreter is shutting down; a Python
  // exception is counted and the first one reported.
  template <typename Fn>
  void CallPython(Fn&& fn);

  py::object consumer_;
  py::object loads_;  // json.loads: the dict is the protocol's JSON, exactly
  ErrorCount* const errors_;
};

}  // namespace trtwatch::python
