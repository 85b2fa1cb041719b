// The HTTP API's routes, all of them in one table: method(s), path pattern, endpoint,
// who may call it, how the answer is delivered and the function that answers. A
// reader sees the whole API here; the connection (http_api.cc) dispatches on it, and
// each endpoint's answer lives in the file pair of its resource (api_builds.h, ...).
//
// Threading: pure functions over immutable data.
#pragma once

#include <span>
#include <string_view>

#include "service/route.h"

namespace trtwatch::service {

// What a caller must present. Today a route is public or needs the bearer token (or a
// dashboard sign-in); per-route roles (viewer, builder, admin) become values here.
enum class Access { kPublic, kToken };

// How the answer goes out: a whole response, an event stream handed to the SSE hubs,
// a file sent by the kernel, a body streamed to the artifact store, or the hosted
// MCP endpoint (service/hosted_endpoint.h).
enum class Delivery { kAnswer, kEventStream, kDownload, kUpload, kHosted };

// The API (docs/api.md), one route a line:
//   ROUTE(methods, pattern, endpoint, access, delivery, handler)
// `methods`: what the route serves (HEAD is GET without the body); `pattern`: {x} is
// one path segment, {x+} a non-empty one; `handler`: the function of the resource's
// file pair (api_*.h) that answers whole, nullptr where the connection answers (the
// hosted /mcp, downloads). Literal paths come before the patterns they would also fit.
// The dashboard's pages and sign-in (api_ui.h) are answered before this table, without
// a token. A macro so that the route matching below stays pure (linked without the
// handlers, fuzzed alone) while the connection (http_api.cc) takes the handlers from
// the same lines.
#define TRTWATCH_SERVICE_ROUTES(ROUTE) \
  ROUTE("GET",             "/healthz",                     kHealth,           kPublic, kAnswer,      HealthAnswer) \
  ROUTE("GET",             "/metrics",                     kMetrics,          kToken,  kAnswer,      MetricsAnswer) \
  ROUTE("GET",             "/openapi.json",                kOpenApi,          kToken,  kAnswer,      OpenApiAnswer) \
  ROUTE("POST, DELETE",    "/mcp",                         kMcp,              kToken,  kHosted,      nullptr) \
  ROUTE("GET",             "/builds/changes",              kBuildChanges,     kToken,  kEventStream, BuildChangesAnswer) \
  ROUTE("GET",             "/models",                      kModels,           kToken,  kAnswer,      ModelsAnswer) \
  ROUTE("GET",             "/history",                     kHistory,          kToken,  kAnswer,      HistoryListAnswer) \
  ROUTE("GET",             "/history/report",              kHistoryReport,    kToken,  kAnswer,      HistoryReportAnswer) \
  ROUTE("GET",             "/audit",                       kAudit,            kToken,  kAnswer,      AuditAnswer) \
  ROUTE("GET, PUT, DELETE","/models/{name}",               kModel,            kToken,  kUpload,      ModelsAnswer) \
  ROUTE("GET, HEAD, PUT",  "/models/{name}/{file}",        kModelFile,        kToken,  kUpload,      ModelsAnswer) \
  ROUTE("GET",             "/groups/{gid+}",               kGroup,            kToken,  kAnswer,      GroupAnswer) \
  ROUTE("POST",            "/groups/{gid+}/cancel",        kGroupCancel,      kToken,  kAnswer,      GroupAnswer) \
  ROUTE("GET",             "/groups/{gid+}/manifest",      kGroupManifest,    kToken,  kAnswer,      GroupAnswer) \
  ROUTE("GET, HEAD",       "/groups/{gid+}/engines/{name}",kGroupEngine,      kToken,  kDownload,    nullptr) \
  ROUTE("GET, POST",       "/builds",                      kBuilds,           kToken,  kAnswer,      BuildsAnswer) \
  ROUTE("GET",             "/builds/{id}",                 kBuild,            kToken,  kAnswer,      BuildAnswer) \
  ROUTE("POST",            "/builds/{id}/cancel",          kBuildCancel,      kToken,  kAnswer,      BuildAnswer) \
  ROUTE("GET",             "/builds/{id}/events",          kBuildEvents,      kToken,  kEventStream, BuildAnswer) \
  ROUTE("GET",             "/builds/{id}/trace",           kBuildTrace,       kToken,  kAnswer,      BuildAnswer) \
  ROUTE("GET, HEAD",       "/builds/{id}/engine",          kBuildEngine,      kToken,  kDownload,    nullptr) \
  ROUTE("GET, HEAD",       "/builds/{id}/timing-cache",    kBuildTimingCache, kToken,  kDownload,    nullptr) \
  ROUTE("GET",             "/builds/{id}/compare",         kBuildCompare,     kToken,  kAnswer,      CompareAnswer)

struct RouteEntry {
  std::string_view methods;  // what the route serves; HEAD is GET without the body
  std::string_view pattern;  // "/builds/{id}/cancel": {x} is one segment, {x+} a non-empty one
  Endpoint endpoint;
  Access access;
  Delivery delivery;  // for the method that streams; the others are answered whole
};

// Every route, in matching order (the first whose pattern fits wins).
std::span<const RouteEntry> Routes();

// The route of a request path (no query), by the table.
Route RouteOf(std::string_view path);

// The table's entry for `endpoint`; kNotFound has none (nullptr).
const RouteEntry* EntryOf(Endpoint endpoint);

}  // namespace trtwatch::service
