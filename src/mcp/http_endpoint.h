// HttpEndpoint: the MCP server over Streamable HTTP (MCP 2025-11-25) at /mcp of
// `trtwatch serve`, sharing its builds, records, token auth and cancel path.
//
// POST /mcp carries one JSON-RPC message. Notifications and responses get 202. A
// request gets application/json when its answer is ready at once, else a
// text/event-stream that carries its progress notifications and ends with its response.
// `initialize` creates a session (Mcp-Session-Id); later requests must name it (400
// without, 404 for an unknown, expired or ended one: the client initializes again);
// DELETE /mcp ends it. Sessions expire when idle and a full table makes room only from
// sessions with no request in flight, else initialize gets 503 (mcp/session_table.h). GET /mcp (a stream of
// server-initiated messages) is 405: this server sends none. An `Origin` header that is
// not this server's own or a loopback origin gets 403 (DNS rebinding), as the spec says.
// A client that drops a stream does not cancel its request (the spec's rule); the
// build goes on and notifications/cancelled or cancel_build stop it.
//
// Threading: the service's event-loop thread only. Beast is confined to mcp/http_beast.cc
// (ServeHttp, mcp/http_beast.h).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "mcp/session.h"
#include "mcp/session_table.h"

namespace trtwatch::mcp {

struct HttpSession;  // one MCP session (mcp/http_session.h)

class HttpEndpoint {
 public:
  HttpEndpoint(Tools& tools, ServerInfo info);
  ~HttpEndpoint();

  Tools& tools() { return tools_; }
  const ServerInfo& info() const { return info_; }
  SessionTable<HttpSession>& sessions() { return sessions_; }

 private:
  Tools& tools_;
  const ServerInfo info_;
  SessionTable<HttpSession> sessions_;
};

}  // namespace trtwatch::mcp
