// The `trtwatch serve` HTTP service: REST API, Server-Sent Events, metrics, over the
// builds layer (src/builds/) that the composition root (app/run_serve.cc) assembles.
//
// One thread runs the Asio event loop of the build manager and its worker pipes, the
// record store and every HTTP request (service/http_api.h); event streams, once
// accepted, move to I/O threads that write them (service/sse_hubs.h). Startup and the
// graceful stop are in server.cc; the options are service/server_options.h, the checks
// of every request service/request_checks.h. This header stays light.
#pragma once

#include <string>

// The options and the request checks, for the callers that start the server.
#include "service/request_checks.h"
#include "service/server_options.h"
#include "service/users_file.h"

namespace boost::asio {
class io_context;
}

namespace trtwatch::builds {
class BuildManager;
class Metrics;
class RecordStore;
class ArtifactStore;
class AuditLog;
}  // namespace trtwatch::builds

namespace trtwatch::service {

class HostedEndpoint;

// What the service runs on, assembled by the composition root: the builds layer's
// objects and the endpoint hosted at /mcp, all used on `io`'s thread.
struct ServiceParts {
  boost::asio::io_context& io;
  builds::RecordStore& store;
  builds::Metrics& metrics;
  builds::BuildManager& manager;
  builds::ArtifactStore& artifacts;
  builds::AuditLog& audit;  // the audit trail the routes write (builds/audit_log.h)
  HostedEndpoint& mcp;
};

// Listens, recovers what an earlier process left (builds that were running become
// interrupted, queued ones run), and serves until SIGTERM/SIGINT and a graceful stop.
// `users`: who may call (CheckServerOptions opens them). Returns the exit code; 2 with
// a message naming the fix if it cannot listen.
int RunServer(const ServerOptions& options, UsersSource users, ServiceParts parts);

}  // namespace trtwatch::service
