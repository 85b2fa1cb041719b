// The engine cache's bindings (include/trtwatch/engine_cache.h) for the Python package's
// trtwatch.EngineCache (python/trtwatch/_engine_cache.py): keys as (digest, parts)
// tuples, answers as dicts, plans as bytes.
//
// GIL: every lookup and store runs with it released (a key's lock may be held by a
// build elsewhere for minutes); GetOrBuild takes it back only to call the Python
// build function and read its plan.
#pragma once

#include <pybind11/pybind11.h>

namespace trtwatch::python {

void BindEngineCache(pybind11::module_& m);

}  // namespace trtwatch::python
