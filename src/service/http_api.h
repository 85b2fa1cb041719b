// The service's HTTP side: the accept loop and each connection's requests (HTTP/1.1
// keep-alive): the head read and checked (service/http_request.h,
// service/request_checks.h), the caller and their role (service/access_check.h), then the route (service/route_table.h) whose
// resource answers (service/api_*.h). An event stream is handed to the SSE hubs
// (service/sse_hubs.h) once its request is accepted; uploads and downloads stream
// through service/http_transfer.h; /mcp goes to the hosted endpoint
// (service/hosted_endpoint.h).
//
// Threading: runs on the build manager's thread (the io_context passed in), with the
// manager, the store and the MCP endpoint; only event streams leave it.
#pragma once

#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "service/server_options.h"
#include "service/users_file.h"

namespace trtwatch::builds {
class ArtifactStore;
class AuditLog;
class BuildManager;
class Metrics;
class RecordStore;
}  // namespace trtwatch::builds

namespace trtwatch::service {

using builds::ArtifactStore;
using builds::BuildManager;
using builds::Metrics;
using builds::RecordStore;
class HostedEndpoint;
class SseHubs;

struct ConnectionCaps {
  int64_t connections = 0;  // open connections, event streams included
  int64_t sse_clients = 0;  // open event streams
};

class HttpApi {
 public:
  HttpApi(boost::asio::io_context& io, const ServerOptions& options, BuildManager& manager, RecordStore& store,
          ArtifactStore& artifacts, Metrics& metrics, builds::AuditLog& audit, SseHubs& hubs, UsersSource users,
          ConnectionCaps caps, HostedEndpoint& mcp);
  ~HttpApi();

  // Accepts connections until the acceptor closes; out of descriptors, it backs off.
  boost::asio::awaitable<void> Accept(boost::asio::ip::tcp::acceptor& acceptor);
  // Graceful stop: keep-alive connections close after their next answer, event streams
  // of record changes end.
  void set_stopping();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trtwatch::service
