// A request path's route: which endpoint it names and the ids in it. The table that
// maps paths to routes is service/route_table.h.
//
// Threading: plain values.
#pragma once

#include <string_view>

namespace trtwatch::service {

// Which endpoint a request path names (methods are checked by the handler). The id of
// a build path is not checked here: the handlers answer a bad one with their own 404.
enum class Endpoint {
  kHealth,
  kMetrics,
  kOpenApi,
  kMcp,
  kBuilds,
  kBuildChanges,
  kBuild,
  kBuildCancel,
  kBuildEvents,
  kBuildTrace,
  kBuildEngine,       // GET /builds/{id}/engine
  kBuildTimingCache,  // GET /builds/{id}/timing-cache
  kBuildCompare,      // GET /builds/{id}/compare
  kHistory,           // GET /history
  kHistoryReport,     // GET /history/report
  kModels,            // GET /models
  kModel,             // PUT, GET, DELETE /models/{name}
  kModelFile,         // PUT /models/{name}/{file}
  kGroup,             // GET /groups/{gid}
  kGroupCancel,       // POST /groups/{gid}/cancel
  kGroupManifest,     // GET /groups/{gid}/manifest
  kGroupEngine,       // GET /groups/{gid}/engines/{name}
  kAudit,             // GET /audit
  kTimingCaches,      // GET /timing-caches
  kTimingCache,       // GET, HEAD, DELETE /timing-caches/{name}
  kNotFound
};

struct Route {
  Endpoint endpoint = Endpoint::kNotFound;
  std::string_view id;    // a build's or group's routes: the path's id segment; kModel, kModelFile: the model's name; kTimingCache: the cache's
  std::string_view file;  // kModelFile: the file's name; kGroupEngine: the engine's name
};
}  // namespace trtwatch::service
