#include "python_watch.h"

#include <utility>

namespace trtwatch::python {

PythonWatch::PythonWatch(WatchOptions options, const std::vector<py::object>& consumers) {
  for (const py::object& consumer : consumers) {
    options.sinks.push_back(std::make_shared<PythonSink>(consumer, &callback_errors_));
  }
  watch_ = std::make_unique<Watch>(std::move(options));
}

PythonWatch::~PythonWatch() {
  // An unfinished build is concluded by ~Watch, which waits for delivery threads that
  // may be waiting for the GIL.
  py::gil_scoped_release nogil;
  watch_.reset();
}

void PythonWatch::Start() {
  watch_->Start();
  started_ = true;
}

BuildResult PythonWatch::Finish(bool engine_built, std::string error) {
  BuildResult result;
  {
    py::gil_scoped_release nogil;
    result = watch_->Finish(engine_built, std::move(error));
  }
  result_ = result;
  return result;
}

BuildResult PythonWatch::RunBuild(const std::function<BuildResult(Watch&)>& build) {
  BuildResult result;
  {
    py::gil_scoped_release nogil;
    result = build(*watch_);
  }
  started_ = true;
  result_ = result;
  return result;
}

void PythonWatch::NoteMonitorFailure(const std::string& what) {
  if (!monitor_failures_.Note()) return;
  watch_->Log(Severity::kWarning, "trtwatch: the progress monitor failed (" + what +
                                      "); the build goes on and further failures are counted in the result");
}

}  // namespace trtwatch::python
