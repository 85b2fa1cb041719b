// What the routes answer from: the builds layer's objects, the options, the users and
// the dashboard's sign-ins. One per service, owned by HttpApi (service/http_api.h).
//
// Threading: the service's event-loop thread only (the manager's), as every route.
#pragma once

#include <cstdint>
#include <string>

#include "core/clock.h"
#include "service/server_options.h"
#include "service/ui_session.h"
#include "service/users_file.h"

namespace trtwatch::builds {
class ArtifactStore;
class AuditLog;
class BuildManager;
class Metrics;
class RecordStore;
}  // namespace trtwatch::builds

namespace trtwatch::service {

inline constexpr double kUiSessionSeconds = 12 * 3600;  // a browser sign-in lasts a working day
inline constexpr size_t kUiSessionLimit = 256;

struct ApiContext {
  const ServerOptions& options;
  builds::BuildManager& manager;
  builds::RecordStore& store;
  builds::ArtifactStore& artifacts;
  builds::Metrics& metrics;
  builds::AuditLog& audit;  // written after each action that succeeded (builds/audit_log.h)
  UsersSource users;  // --users and --token-file's; none: no credentials asked for
  // Beyond these, 503 (connections) and 429 (event streams) with Retry-After.
  const int64_t max_connections;  // open connections, event streams included
  const int64_t max_sse_clients;  // open event streams
  bool stopping = false;    // a graceful stop began: health says so, keep-alive ends
  UiSessions ui_sessions{kUiSessionSeconds, kUiSessionLimit};
};

// The users now: re-read when the users file changed (UsersSource::Current).
inline const Users& CurrentUsers(ApiContext& api) {
  return api.users.Current(NsToSeconds(SteadyClock::Instance().NowNs()));
}

}  // namespace trtwatch::service
