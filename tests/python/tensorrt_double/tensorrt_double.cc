// TEST DOUBLE of TensorRT's Python bindings: a module named `tensorrt` that the Python
// tests (tests/python) import in place of NVIDIA's, so that trtwatch's Python module
// is tested without TensorRT or a GPU. It is NOT TensorRT and builds no engine.
//
// It reproduces what shapes a Python progress monitor's life in the real bindings:
//  - IProgressMonitor is a C++ interface with a pybind11 trampoline: a Python subclass
//    must call IProgressMonitor.__init__, and each callback takes the GIL to call the
//    Python method; an exception in step_complete is printed and becomes `false`
//    (the build is silently cancelled), as in TensorRT's binding.
//  - config.progress_monitor holds a reference to the monitor object.
//  - build_serialized_network releases the GIL and calls the monitor from several
//    native threads at once; a false from step_complete makes every thread stop at
//    its next step, active phases finish, and the call return None.
// The build's shape: a root phase "Building engine" with one step per layer of the
// network; worker threads each time a layer in a child phase of `tactics` steps.
// tensorrt._double_configure(threads=, tactics=, step_seconds=) sets it.
#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace py = pybind11;

namespace {

struct DoubleSettings {
  int threads = 4;
  int tactics = 10;
  double step_seconds = 0.0;
};
DoubleSettings g_settings;  // set under the GIL, read before the GIL is released

class IProgressMonitor {
 public:
  IProgressMonitor() = default;
  virtual ~IProgressMonitor() = default;
  virtual void phaseStart(const char* phaseName, const char* parentPhase, int32_t nbSteps) noexcept = 0;
  virtual bool stepComplete(const char* phaseName, int32_t step) noexcept = 0;
  virtual void phaseFinish(const char* phaseName) noexcept = 0;
};

// The trampoline, as TensorRT's binding has one: the override macros take the GIL.
class PyIProgressMonitor : public IProgressMonitor {
 public:
  void phaseStart(const char* phaseName, const char* parentPhase, int32_t nbSteps) noexcept override {
    try {
      PYBIND11_OVERRIDE_PURE_NAME(void, IProgressMonitor, "phase_start", phaseStart, phaseName, parentPhase, nbSteps);
    } catch (const std::exception& e) {
      std::cerr << "[ERROR] Exception caught in phase_start(): " << e.what() << std::endl;
    }
  }
  bool stepComplete(const char* phaseName, int32_t step) noexcept override {
    try {
      PYBIND11_OVERRIDE_PURE_NAME(bool, IProgressMonitor, "step_complete", stepComplete, phaseName, step);
    } catch (const std::exception& e) {
      std::cerr << "[ERROR] Exception caught in step_complete(): " << e.what() << std::endl;
    }
    return false;  // the real binding's behaviour: an exception cancels the build
  }
  void phaseFinish(const char* phaseName) noexcept override {
    try {
      PYBIND11_OVERRIDE_PURE_NAME(void, IProgressMonitor, "phase_finish", phaseFinish, phaseName);
    } catch (const std::exception& e) {
      std::cerr << "[ERROR] Exception caught in phase_finish(): " << e.what() << std::endl;
    }
  }
};

struct Logger {
  int min_severity = 2;
};

struct ITensor {
  std::string name;
};

struct ILayer {
  ITensor output;
};

struct INetworkDefinition {
  int num_layers = 0;
  int num_outputs = 0;
};

struct IBuilderConfig {
  py::object progress_monitor = py::none();  // holds a reference, as TensorRT's does
};

struct IHostMemory {
  std::string bytes;
};

struct Builder {
  explicit Builder(Logger& logger_in) : logger(&logger_in) {}
  Logger* logger;
};

// The build, on native threads, with the GIL released by the caller.
bool RunBuild(IProgressMonitor* monitor, int layers, DoubleSettings settings) {
  const char* root = "Building engine";
  std::atomic<bool> stop{false};
  std::atomic<int> next_layer{0};
  std::mutex root_mu;  // root steps in order, as TensorRT's builder reports them
  int root_step = 0;
  const auto step_time = std::chrono::duration<double>(settings.step_seconds);
  auto step = [&](const char* phase, int32_t index) {
    if (stop.load()) return false;
    if (monitor != nullptr && !monitor->stepComplete(phase, index)) stop.store(true);
    return !stop.load();
  };
  if (monitor != nullptr) monitor->phaseStart(root, nullptr, layers);
  std::vector<std::thread> workers;
  for (int t = 0; t < settings.threads; ++t) {
    workers.emplace_back([&] {
      for (int layer = next_layer++; layer < layers && !stop.load(); layer = next_layer++) {
        const std::string name = "Tactic selection: layer " + std::to_string(layer);
        if (monitor != nullptr) monitor->phaseStart(name.c_str(), root, settings.tactics);
        for (int32_t k = 0; k < settings.tactics; ++k) {
          if (settings.step_seconds > 0) std::this_thread::sleep_for(step_time);
          if (!step(name.c_str(), k)) break;
        }
        if (monitor != nullptr) monitor->phaseFinish(name.c_str());
        std::lock_guard<std::mutex> lock(root_mu);
        if (!step(root, root_step++)) break;
      }
    });
  }
  for (std::thread& w : workers) w.join();
  if (monitor != nullptr) monitor->phaseFinish(root);
  return !stop.load();
}

}  // namespace

PYBIND11_MODULE(tensorrt, m) {
  m.doc() = "TEST DOUBLE of TensorRT's Python bindings (trtwatch tests/python). Not TensorRT: no engine is built.";
  m.attr("__version__") = "0.0.0+trtwatch.test.double";
  m.attr("__test_double__") = true;

  m.def("_double_configure",
        [](int threads, int tactics, double step_seconds) {
          if (threads < 1 || tactics < 1 || step_seconds < 0) throw py::value_error("threads, tactics >= 1; step_seconds >= 0");
          g_settings = DoubleSettings{threads, tactics, step_seconds};
        },
        py::arg("threads") = 4, py::arg("tactics") = 10, py::arg("step_seconds") = 0.0);

  py::class_<IProgressMonitor, PyIProgressMonitor>(m, "IProgressMonitor")
      .def(py::init<>())
      .def("phase_start", &IProgressMonitor::phaseStart)
      .def("step_complete", &IProgressMonitor::stepComplete)
      .def("phase_finish", &IProgressMonitor::phaseFinish);

  py::class_<Logger> logger(m, "Logger");
  logger.def(py::init([](int severity) { return Logger{severity}; }), py::arg("min_severity") = 2);
  logger.attr("ERROR") = 1;
  logger.attr("WARNING") = 2;
  logger.attr("INFO") = 3;
  logger.attr("VERBOSE") = 4;

  m.attr("float32") = "float32";
  py::class_<ITensor>(m, "ITensor").def_readonly("name", &ITensor::name);
  py::class_<ILayer>(m, "ILayer").def("get_output", [](const ILayer& l, int index) {
    if (index != 0) throw py::index_error("the test double's layers have one output");
    return l.output;
  });
  py::class_<INetworkDefinition>(m, "INetworkDefinition")
      .def("add_input",
           [](INetworkDefinition& n, std::string name, py::object, py::object) {
             ++n.num_layers;
             return ITensor{std::move(name)};
           },
           py::arg("name"), py::arg("dtype"), py::arg("shape"))
      .def("add_identity",
           [](INetworkDefinition& n, const ITensor& input) {
             ++n.num_layers;
             return ILayer{ITensor{input.name + "'"}};
           })
      .def("mark_output", [](INetworkDefinition& n, const ITensor&) { ++n.num_outputs; })
      .def_readonly("num_layers", &INetworkDefinition::num_layers);

  py::class_<IBuilderConfig>(m, "IBuilderConfig")
      .def_property(
          "progress_monitor", [](const IBuilderConfig& c) { return c.progress_monitor; },
          [](IBuilderConfig& c, py::object monitor) {
            if (!monitor.is_none() && !py::isinstance<IProgressMonitor>(monitor)) {
              throw py::type_error("progress_monitor must be an IProgressMonitor or None");
            }
            c.progress_monitor = std::move(monitor);
          });

  py::class_<IHostMemory>(m, "IHostMemory")
      .def_property_readonly("nbytes", [](const IHostMemory& h) { return h.bytes.size(); })
      .def("__bytes__", [](const IHostMemory& h) { return py::bytes(h.bytes); });

  py::class_<Builder>(m, "Builder")
      .def(py::init<Logger&>(), py::keep_alive<1, 2>())
      .def("create_network", [](Builder&, int) { return INetworkDefinition{}; }, py::arg("flags") = 0)
      .def("create_builder_config", [](Builder&) { return IBuilderConfig{}; })
      .def("build_serialized_network",
           [](Builder&, INetworkDefinition& network, IBuilderConfig& config) -> py::object {
             py::object held = config.progress_monitor;  // alive for the whole build
             IProgressMonitor* monitor = held.is_none() ? nullptr : held.cast<IProgressMonitor*>();
             const int layers = network.num_layers > 0 ? network.num_layers : 1;
             const DoubleSettings settings = g_settings;
             bool built = false;
             {
               py::gil_scoped_release nogil;
               built = RunBuild(monitor, layers, settings);
             }
             if (!built) return py::none();
             return py::cast(IHostMemory{"trtwatch test double: not an engine"});
           },
           py::arg("network"), py::arg("config"));
}
