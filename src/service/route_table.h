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

// Who may call a route (roles.h turns it and the method into the role needed): anyone;
// a viewer; kReadWrite: a viewer to read (GET, HEAD) and a builder for the rest
// (submit, upload, delete); a builder for every method (cancels; /mcp, whose tools
// submit builds); an admin (the audit trail).
enum class Access { kPublic, kViewer, kReadWrite, kBuilder, kAdmin };

// How the answer goes out: a whole response, an event stream handed to the SSE hubs,
// a file sent by the kernel, a body streamed to the artifact store, or the hosted
// MCP endpoint (service/hosted_endpoint.h).
enum class Delivery { kAnswer, kEventStream, kDownload, kUpload, kHosted };

// The API (docs/api.md), one route a line:
//   ROUTE(methods, pattern, endpoint, access, delivery, handler)
// `methods`: what the route serves (HEAD is GET without the body); `pattern`: {x} is
// one path segment, {x+} a non-empty one; `handler`: the function of the resource's
// file pair (api_*.h) that answers whole, nullptr where the connection answers (the
// hosted /mcp, downloads); a download route's handler answers its other methods. Literal paths come before the patterns they would also fit.
// The dashboard's pages and sign-in (api_ui.h) are answered before this table, without
// a token. A macro so that the route matching below stays pure (linked without the
// handlers, fuzzed alone) while the connection (http_api.cc) takes the handlers from
// the same lines.
#define TRTWATCH_SERVICE_ROUTES(ROUTE) \
  ROUTE("GET",             "/healthz",                     kHealth,           kPublic,    kAnswer,      HealthAnswer) \
  ROUTE("GET",             "/metrics",                     kMetrics,          kViewer,    kAnswer,      MetricsAnswer) \
  ROUTE("GET",             "/openapi.json",                kOpenApi,          kViewer,    kAnswer,      OpenApiAnswer) \
  ROUTE("POST, DELETE",    "/mcp",                         kMcp,              kBuilder,   kHosted,      nullptr) \
  ROUTE("GET",             "/builds/changes",              kBuildChanges,     kViewer,    kEventStream, BuildChangesAnswer) \
  ROUTE("GET",             "/models",                      kModels,           kViewer,    kAnswer,      ModelsAnswer) \
  ROUTE("GET",             "/history",                     kHistory,          kViewer,    kAnswer,      HistoryListAnswer) \
  ROUTE("GET",             "/history/report",              kHistoryReport,    kViewer,    kAnswer,      HistoryReportAnswer) \
  ROUTE("GET",             "/audit",                       kAudit,            kAdmin,     kAnswer,      AuditAnswer) \
  ROUTE("GET",             "/timing-caches",               kTimingCaches,     kViewer,    kAnswer,      TimingCachesAnswer) \
  ROUTE("GET, HEAD, DELETE","/timing-caches/{name}",       kTimingCache,      kReadWrite, kDownload,    TimingCachesAnswer) \
  ROUTE("GET, PUT, DELETE","/models/{name}",               kModel,            kReadWrite, kUpload,      ModelsAnswer) \
  ROUTE("GET, HEAD, PUT",  "/models/{name}/{file}",        kModelFile,        kReadWrite, kUpload,      ModelsAnswer) \
  ROUTE("GET",             "/groups/{gid+}",               kGroup,            kViewer,    kAnswer,      GroupAnswer) \
  ROUTE("POST",            "/groups/{gid+}/cancel",        kGroupCancel,      kBuilder,   kAnswer,      GroupAnswer) \
  ROUTE("GET",             "/groups/{gid+}/manifest",      kGroupManifest,    kViewer,    kAnswer,      GroupAnswer) \
  ROUTE("GET, HEAD",       "/groups/{gid+}/engines/{name}",kGroupEngine,      kViewer,    kDownload,    nullptr) \
  ROUTE("GET, POST",       "/builds",                      kBuilds,           kReadWrite, kAnswer,      BuildsAnswer) \
  ROUTE("GET",             "/builds/{id}",                 kBuild,            kViewer,    kAnswer,      BuildAnswer) \
  ROUTE("POST",            "/builds/{id}/cancel",          kBuildCancel,      kBuilder,   kAnswer,      BuildAnswer) \
  ROUTE("GET",             "/builds/{id}/events",          kBuildEvents,      kViewer,    kEventStream, BuildAnswer) \
  ROUTE("GET",             "/builds/{id}/trace",           kBuildTrace,       kViewer,    kAnswer,      BuildAnswer) \
  ROUTE("GET, HEAD",       "/builds/{id}/engine",          kBuildEngine,      kViewer,    kDownload,    nullptr) \
  ROUTE("GET, HEAD",       "/builds/{id}/timing-cache",    kBuildTimingCache, kViewer,    kDownload,    nullptr) \
  ROUTE("GET",             "/builds/{id}/compare",         kBuildCompare,     kViewer,    kAnswer,      CompareAnswer)

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
