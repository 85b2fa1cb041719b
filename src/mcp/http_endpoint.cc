#include "mcp/http_endpoint.h"

#include "mcp/http_session.h"

namespace trtwatch::mcp {

HttpEndpoint::HttpEndpoint(Tools& tools, ServerInfo info)
    : tools_(tools), info_(std::move(info)), sessions_(kMaxSessions, kSessionIdleTimeout) {}
HttpEndpoint::~HttpEndpoint() = default;

}  // namespace trtwatch::mcp
