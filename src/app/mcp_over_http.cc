#include "app/mcp_over_http.h"

#include "mcp/http_beast.h"

namespace trtwatch::app {

boost::asio::awaitable<bool> McpOverHttp::Serve(boost::beast::tcp_stream& stream, const Request& request,
                                                const service::HostedCaller& caller) {
  // A named local, not a temporary inside co_await: g++ 12 destroys those twice.
  const mcp::Caller as{caller.name, caller.admin};
  co_return co_await mcp::ServeHttp(stream, request, endpoint_, as);
}

}  // namespace trtwatch::app
