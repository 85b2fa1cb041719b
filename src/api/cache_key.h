// The build key of the caller's own build (include/trtwatch/engine_cache.h): the
// public key types over keys/, and the GPU found through the CUDA driver when the
// caller names none. The libraries are parameters so that tests load stand-ins.
#pragma once

#include <optional>
#include <string>

#include <trtwatch/engine_cache.h>

#include "keys/build_key.h"

namespace trtwatch::api {

CacheKeyResult ComputeCacheKey(const CacheKeySource& source, const std::string& cuda_library);

struct CheckedKey {
  std::optional<keys::BuildKey> key;
  std::string error;
};

// The internal key of a public one, checked: its digest must be its parts' digest (a
// key assembled by hand, or edited, would name another entry's folder).
CheckedKey CheckKey(const CacheKey& key);

}  // namespace trtwatch::api
