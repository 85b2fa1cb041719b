// McpOverHttp: MCP's Streamable HTTP endpoint (mcp/http_endpoint.h) as the endpoint
// `trtwatch serve` hosts at /mcp (service/hosted_endpoint.h): the one place that joins
// the two front ends, so that neither includes the other.
//
// Threading: the service's event-loop thread.
#pragma once

#include "mcp/http_endpoint.h"
#include "service/hosted_endpoint.h"

namespace trtwatch::app {

class McpOverHttp final : public service::HostedEndpoint {
 public:
  McpOverHttp(mcp::Tools& tools, mcp::ServerInfo info) : endpoint_(tools, std::move(info)) {}

  boost::asio::awaitable<bool> Serve(boost::beast::tcp_stream& stream, const Request& request,
                                     const service::HostedCaller& caller) override;

 private:
  mcp::HttpEndpoint endpoint_;
};

}  // namespace trtwatch::app
