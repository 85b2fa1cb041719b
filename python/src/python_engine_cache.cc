#include "python_engine_cache.h"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <trtwatch/engine_cache.h>

#include "python_watch.h"

namespace py = pybind11;

namespace trtwatch::python {

namespace {

using Parts = std::vector<std::pair<std::string, std::string>>;
using KeyTuple = std::pair<std::string, Parts>;

KeyTuple ToTuple(const CacheKey& key) { return {key.digest, key.parts}; }
CacheKey FromTuple(const std::string& digest, const Parts& parts) { return CacheKey{digest, parts}; }

py::dict ToDict(const CachedEngine& found) {
  py::dict d;
  d["status"] = std::string(CacheStatusName(found.status));
  d["error"] = found.error;
  d["warning"] = found.warning;
  d["key"] = found.key;
  d["path"] = found.path;
  d["plan"] = found.plan.empty() ? py::object(py::none()) : py::object(py::bytes(found.plan.data(), found.plan.size()));
  d["size"] = found.size;
  d["age_seconds"] = found.age_seconds;
  d["build_seconds"] = found.build_seconds;
  d["stored"] = found.stored;
  d["result"] = found.result ? py::cast(*found.result) : py::object(py::none());
  return d;
}

py::dict ToDict(const CacheStoreResult& stored) {
  py::dict d;
  d["stored"] = stored.stored;
  d["error"] = stored.error;
  d["pruned"] = stored.pruned;
  return d;
}

// The bytes of what a Python build function returned (bytes, bytearray, memoryview,
// TensorRT's IHostMemory: anything with the buffer protocol); None is no plan. Called
// with the GIL held.
std::vector<char> PlanOf(const py::object& returned) {
  if (returned.is_none()) return {};
  if (PyObject_CheckBuffer(returned.ptr())) {
    const py::buffer_info info = py::reinterpret_borrow<py::buffer>(returned).request();
    return PlanBytes(info.ptr, static_cast<size_t>(info.size * info.itemsize));
  }
  if (py::hasattr(returned, "__bytes__")) {
    PyObject* converted = PyObject_Bytes(returned.ptr());
    if (converted == nullptr) throw py::error_already_set();
    const std::string bytes = py::reinterpret_steal<py::bytes>(converted);
    return std::vector<char>(bytes.begin(), bytes.end());
  }
  throw py::type_error("the build function must return the plan's bytes (bytes, or TensorRT's IHostMemory) or None, "
                       "not " + std::string(py::str(py::type::of(returned).attr("__name__"))));
}

// `build_fn` called with the GIL taken back (the cache's call runs without it). Under a
// watch its exception fails the watched build, as Watch::Run does: its text is taken
// here, with the GIL, and the Python exception left behind.
EngineCache::PlanBuilder PythonBuilder(const py::object& build_fn, bool watched) {
  return [&build_fn, watched] {
    py::gil_scoped_acquire gil;
    if (!watched) return PlanOf(build_fn());
    try {
      return PlanOf(build_fn());
    } catch (py::error_already_set& e) {
      // "RuntimeError: the message", as trtwatch.watch's `with` words an exception.
      throw std::runtime_error(std::string(py::str(e.type().attr("__name__"))) + ": " +
                               std::string(py::str(e.value())));
    }
  };
}

}  // namespace

void BindEngineCache(py::module_& m) {
  m.def(
      "cache_key",
      [](std::vector<std::string> models, std::vector<std::string> options, std::string tensorrt_version,
         std::string gpu_name, std::string gpu_compute_capability, int device, Parts extra) {
        CacheKeySource source;
        source.models = std::move(models);
        source.options = std::move(options);
        source.tensorrt_version = std::move(tensorrt_version);
        source.gpu_name = std::move(gpu_name);
        source.gpu_compute_capability = std::move(gpu_compute_capability);
        source.device = device;
        source.extra = std::move(extra);
        CacheKeyResult key;
        {
          py::gil_scoped_release nogil;  // hashes the models
          key = ComputeCacheKey(source);
        }
        if (!key.ok()) throw py::value_error(key.error);
        return ToTuple(*key.key);
      },
      py::arg("models"), py::arg("options"), py::arg("tensorrt_version"), py::arg("gpu_name"),
      py::arg("gpu_compute_capability"), py::arg("device"), py::arg("extra"),
      "A build key (digest, parts) from model files, option strings, TensorRT's version and the GPU.");
  m.def("cache_key_from_text", [](const std::string& text) { return ToTuple(CacheKeyFromText(text)); },
        py::arg("text"), "A build key (digest, parts) from text of your own.");

  py::class_<EngineCache>(m, "EngineCache", "The engine cache. Use trtwatch.EngineCache.")
      .def(py::init([](const std::string& folder, std::optional<uint64_t> max_bytes,
                       std::optional<uint64_t> max_entries) {
             EngineCacheOpened opened = EngineCache::Open({folder, max_bytes, max_entries});
             if (!opened.cache) throw py::value_error(opened.error);
             return std::move(opened.cache);
           }),
           py::arg("folder") = "", py::arg("max_bytes") = py::none(), py::arg("max_entries") = py::none())
      .def_property_readonly("folder", &EngineCache::folder)
      .def(
          "find",
          [](EngineCache& cache, const std::string& digest, const Parts& parts) {
            CachedEngine found;
            {
              py::gil_scoped_release nogil;
              found = cache.Find(FromTuple(digest, parts));
            }
            return ToDict(found);
          },
          py::arg("digest"), py::arg("parts"))
      .def(
          "get",
          [](EngineCache& cache, const std::string& digest, const Parts& parts) {
            CachedEngine found;
            {
              py::gil_scoped_release nogil;
              found = cache.Get(FromTuple(digest, parts));
            }
            return ToDict(found);
          },
          py::arg("digest"), py::arg("parts"))
      .def(
          "put",
          [](EngineCache& cache, const std::string& digest, const Parts& parts, const py::buffer& plan,
             double build_seconds, const std::string& model) {
            const py::buffer_info info = plan.request();
            CacheStoreResult stored;
            {
              py::gil_scoped_release nogil;  // `info` keeps the buffer alive
              stored = cache.Put(FromTuple(digest, parts), info.ptr, static_cast<size_t>(info.size * info.itemsize),
                                 build_seconds, model);
            }
            return ToDict(stored);
          },
          py::arg("digest"), py::arg("parts"), py::arg("plan"), py::arg("build_seconds"), py::arg("model"))
      .def(
          "put_file",
          [](EngineCache& cache, const std::string& digest, const Parts& parts, const std::string& path,
             double build_seconds, const std::string& model) {
            CacheStoreResult stored;
            {
              py::gil_scoped_release nogil;
              stored = cache.PutFile(FromTuple(digest, parts), path, build_seconds, model);
            }
            return ToDict(stored);
          },
          py::arg("digest"), py::arg("parts"), py::arg("path"), py::arg("build_seconds"), py::arg("model"))
      .def(
          "get_or_build",
          [](EngineCache& cache, const std::string& digest, const Parts& parts, const py::object& build_fn,
             const std::string& model) {
            CachedEngine found;
            bool build_ran = false;  // tells a failed build from a cache that could not be used
            const EngineCache::PlanBuilder build = PythonBuilder(build_fn, /*watched=*/false);
            {
              py::gil_scoped_release nogil;  // an exception from build_fn passes through, the lock released
              found = cache.GetOrBuild(FromTuple(digest, parts), [&] {
                build_ran = true;
                return build();
              }, model);
            }
            py::dict answer = ToDict(found);
            answer["build_ran"] = build_ran;
            return answer;
          },
          py::arg("digest"), py::arg("parts"), py::arg("build_fn"), py::arg("model"))
      .def(
          "get_or_build_watched",
          [](EngineCache& cache, const std::string& digest, const Parts& parts, const py::object& build_fn,
             PythonWatch& watch) {
            CachedEngine found;
            watch.RunBuild([&](Watch& w) {
              found = cache.GetOrBuild(FromTuple(digest, parts), w, PythonBuilder(build_fn, /*watched=*/true));
              return found.result.value_or(BuildResult{});
            });
            return ToDict(found);
          },
          py::arg("digest"), py::arg("parts"), py::arg("build_fn"), py::arg("watch"))
      .def("stats", [](const EngineCache& cache) {
        EngineCacheStats stats;
        {
          py::gil_scoped_release nogil;
          stats = cache.Stats();
        }
        py::dict d;
        d["entries"] = stats.entries;
        d["bytes"] = stats.bytes;
        d["hits"] = stats.hits;
        d["misses"] = stats.misses;
        d["seconds_saved"] = stats.seconds_saved;
        return d;
      });
}

}  // namespace trtwatch::python
