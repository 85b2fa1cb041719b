#include "python_sink.h"

#include <utility>

namespace trtwatch::python {

PythonSink::PythonSink(py::object consumer, ErrorCount* errors)
    : consumer_(std::move(consumer)), loads_(py::module_::import("json").attr("loads")), errors_(errors) {}

PythonSink::~PythonSink() {
  if (_Py_IsFinalizing()) {
    // The interpreter is gone: the references die with it.
    consumer_.release();
    loads_.release();
    return;
  }
  py::gil_scoped_acquire gil;
  consumer_ = py::object();
  loads_ = py::object();
}

template <typename Fn>
void PythonSink::CallPython(Fn&& fn) {
  if (_Py_IsFinalizing()) return;
  py::gil_scoped_acquire gil;
  try {
    fn();
  } catch (py::error_already_set& error) {
    if (errors_->Note()) {
      error.discard_as_unraisable(consumer_);
    } else {
      error.restore();
      PyErr_Clear();
    }
  } catch (const std::exception& error) {
    if (errors_->Note()) PySys_WriteStderr("trtwatch: an event consumer failed: %s\n", error.what());
  }
}

void PythonSink::OnEvent(const Event& event) {
  const std::string line = EventToJson(event);
  CallPython([&] { consumer_(loads_(line)); });
}

void PythonSink::Close() {
  CallPython([&] {
    if (py::hasattr(consumer_, "close")) consumer_.attr("close")();
  });
}

}  // namespace trtwatch::python
