#include "app/mcp_over_http.h"

#include "mcp/http_beast.h"

namespace trtwatch::app {

boost::asio::awaitable<bool> McpOverHttp::Serve(boost::beast::tcp_stream& stream, const Request& request) {
  co_return co_await mcp::ServeHttp(stream, request, endpoint_);
}

}  // namespace trtwatch::app
