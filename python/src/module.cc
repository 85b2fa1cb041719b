// trtwatch._trtwatch: the native half of the Python module (python/trtwatch is the
// other). Thin bindings over the public C++ API; the Python package holds the
// friendly layer (trtwatch.watch, trtwatch.simulate, the TensorRT monitor).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <trtwatch/replay.h>
#include <trtwatch/simulate.h>
#include <trtwatch/version.h>
#include <trtwatch/watch.h>

#include "python_engine_cache.h"
#include "python_watch.h"
#include "runner/duration.h"

namespace py = pybind11;

namespace trtwatch::python {
namespace {

template <typename Enum, size_t N>
Enum FromName(const std::string& what, const std::string& name, const char* const (&names)[N]) {
  std::string valid;
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<Enum>(i);
    valid += (i ? ", " : "") + std::string(names[i]);
  }
  throw py::value_error(what + " must be one of " + valid + ", not '" + name + "'");
}

constexpr const char* kProgress[] = {"auto", "tty", "plain", "json", "quiet"};
constexpr const char* kColor[] = {"auto", "always", "never"};
constexpr const char* kStallAction[] = {"warn", "cancel"};
constexpr const char* kReason[] = {"user", "signal", "timeout", "stall", "api", "budget"};
constexpr const char* kSeverity[] = {"internal_error", "error", "warning", "info", "verbose"};

std::optional<Seconds> ToSeconds(const std::optional<double>& s) {
  if (!s) return std::nullopt;
  return Seconds(*s);
}

double ParseDurationOrThrow(const py::object& value) {
  if (py::isinstance<py::bool_>(value)) throw py::type_error("a duration is a number of seconds or text like '2h'");
  if (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) {
    const double seconds = value.cast<double>();
    if (!(seconds > 0)) throw py::value_error("a duration must be greater than zero seconds");
    return seconds;
  }
  if (!py::isinstance<py::str>(value)) throw py::type_error("a duration is a number of seconds or text like '2h'");
  double seconds = 0;
  std::string error;
  if (!ParseDuration(value.cast<std::string>(), &seconds, &error)) throw py::value_error(error);
  return seconds;
}

py::dict ResultAnomalies(const Anomalies& a) {
  py::dict d;
  d["null_name"] = a.null_name;
  d["bad_step_count"] = a.bad_step_count;
  d["unknown_parent"] = a.unknown_parent;
  d["step_unknown_phase"] = a.step_unknown_phase;
  d["step_out_of_range"] = a.step_out_of_range;
  d["finish_unknown_phase"] = a.finish_unknown_phase;
  d["unfinished_phases"] = a.unfinished_phases;
  d["after_build"] = a.after_build;
  return d;
}

}  // namespace
}  // namespace trtwatch::python

PYBIND11_MODULE(_trtwatch, m) {
  using namespace trtwatch;          // NOLINT: the bindings name the API throughout
  using namespace trtwatch::python;  // NOLINT
  m.doc() = "Native part of trtwatch (C++ core). Use the `trtwatch` package, not this module.";
  m.attr("__version__") = TRTWATCH_VERSION_STRING;

  m.def("parse_duration", &ParseDurationOrThrow, py::arg("value"),
        "Seconds from a number or text as `trtwatch build --timeout` reads it: '90', '1.5m', '2h', '500ms'.");
  m.def("simulation_profiles", &SimulationProfiles, "Names of the built-in simulation profiles.");

  py::class_<PhaseSummary>(m, "PhaseSummary", "Time spent in all instances of one phase name.")
      .def_readonly("phase", &PhaseSummary::phase)
      .def_readonly("count", &PhaseSummary::count)
      .def_readonly("early", &PhaseSummary::early, "instances finished before their last step")
      .def_readonly("seconds", &PhaseSummary::seconds, "total time, child phases included")
      .def_readonly("self_seconds", &PhaseSummary::self_seconds, "total less the time covered by direct child phases")
      .def("__repr__", [](const PhaseSummary& p) {
        return "PhaseSummary(phase=" + py::repr(py::str(p.phase)).cast<std::string>() +
               ", count=" + std::to_string(p.count) + ", seconds=" + std::to_string(p.seconds) +
               ", self_seconds=" + std::to_string(p.self_seconds) + ")";
      });

  py::class_<BuildResult>(m, "BuildResult", "How a build ended (see trtwatch.Result).")
      .def_property_readonly("status", [](const BuildResult& r) { return std::string(BuildStatusName(r.status)); })
      .def_readonly("error", &BuildResult::error)
      .def_readonly("elapsed", &BuildResult::elapsed)
      .def_property_readonly("cancel_reason", [](const BuildResult& r) -> std::optional<std::string> {
        if (!r.cancel_reason) return std::nullopt;
        return std::string(CancelReasonName(*r.cancel_reason));
      })
      .def_property_readonly("cancel_latency_to_first_false", [](const BuildResult& r) -> std::optional<double> {
        if (!r.cancel_latency) return std::nullopt;
        return r.cancel_latency->to_first_false;
      })
      .def_property_readonly("cancel_latency_to_return", [](const BuildResult& r) -> std::optional<double> {
        if (!r.cancel_latency) return std::nullopt;
        return r.cancel_latency->to_return;
      })
      .def_readonly("phases", &BuildResult::phases)
      .def_property_readonly("anomalies", [](const BuildResult& r) { return ResultAnomalies(r.anomalies); })
      .def_readonly("events_dropped", &BuildResult::events_dropped)
      .def_property_readonly("estimate",
                             [](const BuildResult& r) -> std::optional<py::dict> {
                               if (!r.estimate) return std::nullopt;
                               py::dict estimate;
                               if (r.estimate->remaining) {
                                 estimate["remaining"] = py::dict(py::arg("p10") = r.estimate->remaining->p10,
                                                                  py::arg("p50") = r.estimate->remaining->p50,
                                                                  py::arg("p90") = r.estimate->remaining->p90);
                               } else {
                                 estimate["remaining"] = py::none();
                               }
                               estimate["based_on"] =
                                   py::dict(py::arg("builds") = r.estimate->builds, py::arg("match") = r.estimate->match);
                               estimate["longer_than_history"] = r.estimate->longer_than_history;
                               return estimate;
                             })
      .def_property_readonly("cache",
                             [](const BuildResult& r) -> std::optional<py::dict> {
                               if (r.cache.key.empty() && r.cache.state.empty()) return std::nullopt;
                               py::dict cache;
                               cache["key"] = r.cache.key;
                               cache["state"] = r.cache.state;
                               cache["age_seconds"] = r.cache.age_seconds;
                               cache["built_seconds"] = r.cache.built_seconds;
                               return cache;
                             })
      .def_readonly("exit_code", &BuildResult::exit_code);

  py::class_<PythonWatch>(m, "Watch", "One build watched by the C++ core. Use trtwatch.watch().")
      .def(py::init([](const std::string& progress, const std::string& color, const std::string& events,
                       const std::string& trace, std::optional<double> timeout, std::optional<double> stall,
                       const std::string& stall_action, std::optional<double> kill_after, bool handle_signals,
                       std::string model, std::string backend, Facts facts, const std::vector<py::object>& consumers,
                       std::string history, bool no_history) {
             WatchOptions options;
             options.progress = FromName<Progress>("progress", progress, kProgress);
             options.color = FromName<Color>("color", color, kColor);
             options.events_file = events;
             options.trace_file = trace;
             options.timeout = ToSeconds(timeout);
             options.stall_timeout = ToSeconds(stall);
             options.stall_action = FromName<StallAction>("stall_action", stall_action, kStallAction);
             options.kill_after = ToSeconds(kill_after);
             options.handle_signals = handle_signals;
             options.model = std::move(model);
             options.backend = std::move(backend);
             options.facts = std::move(facts);
             options.history = std::move(history);
             options.no_history = no_history;
             try {
               return std::make_unique<PythonWatch>(std::move(options), consumers);
             } catch (const std::invalid_argument& e) {
               throw py::value_error(e.what());
             }
           }),
           py::kw_only(), py::arg("progress") = "auto", py::arg("color") = "auto", py::arg("events") = "",
           py::arg("trace") = "", py::arg("timeout") = py::none(), py::arg("stall") = py::none(),
           py::arg("stall_action") = "warn", py::arg("kill_after") = py::none(), py::arg("handle_signals") = false,
           py::arg("model") = "", py::arg("backend") = "tensorrt", py::arg("facts") = Facts{},
           py::arg("consumers") = std::vector<py::object>{}, py::arg("history") = "", py::arg("no_history") = false)
      .def("phase_start",
           [](PythonWatch& w, const std::string& name, std::optional<std::string> parent, int32_t steps) {
             w.watch().phaseStart(name.c_str(), parent ? parent->c_str() : nullptr, steps);
           },
           py::arg("phase_name"), py::arg("parent_phase"), py::arg("num_steps"))
      .def("step_complete",
           [](PythonWatch& w, const std::string& name, int32_t step) { return w.watch().stepComplete(name.c_str(), step); },
           py::arg("phase_name"), py::arg("step"))
      .def("phase_finish", [](PythonWatch& w, const std::string& name) { w.watch().phaseFinish(name.c_str()); },
           py::arg("phase_name"))
      .def("log",
           [](PythonWatch& w, const std::string& severity, const std::string& message) {
             w.watch().Log(FromName<Severity>("severity", severity, kSeverity), message);
           },
           py::arg("severity"), py::arg("message"))
      .def("add_fact", [](PythonWatch& w, std::string k, std::string v) { w.watch().AddFact(std::move(k), std::move(v)); })
      .def("start", &PythonWatch::Start)
      .def("finish", &PythonWatch::Finish, py::arg("engine_built"), py::arg("error") = "")
      .def("simulate",
           [](PythonWatch& w, std::string profile, uint64_t seed, double speed) {
             try {
               const SimulateOptions options{std::move(profile), seed, speed};
               return w.RunBuild([&](Watch& watch) { return Simulate(watch, options); });
             } catch (const std::invalid_argument& e) {
               throw py::value_error(e.what());
             }
           },
           py::arg("profile"), py::arg("seed") = 1, py::arg("speed") = 1.0)
      .def("replay",
           [](PythonWatch& w, std::string path, double speed, bool instant) {
             try {
               const ReplayOptions options{std::move(path), speed, instant};
               return w.RunBuild([&](Watch& watch) { return Replay(watch, options); });
             } catch (const std::invalid_argument& e) {
               throw py::value_error(e.what());
             }
           },
           py::arg("path"), py::arg("speed") = 1.0, py::arg("instant") = false)
      .def("cancel",
           [](PythonWatch& w, std::string message, const std::string& reason) {
             return w.watch().Cancel(std::move(message), FromName<CancelReason>("reason", reason, kReason));
           },
           py::arg("message"), py::arg("reason") = "api")
      .def_property_readonly("cancel_requested", [](PythonWatch& w) { return w.watch().cancel_requested(); })
      .def_property_readonly("build_id", [](PythonWatch& w) { return w.watch().build_id(); })
      .def_property_readonly("started", &PythonWatch::started)
      .def_property_readonly("result", &PythonWatch::result)
      .def("note_monitor_failure", &PythonWatch::NoteMonitorFailure, py::arg("what"))
      .def_property_readonly("monitor_failures", &PythonWatch::monitor_failures)
      .def_property_readonly("callback_errors", &PythonWatch::callback_errors);

  BindEngineCache(m);
}
