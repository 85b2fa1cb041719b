// HostedEndpoint: another protocol that `trtwatch serve` carries at a path of its own
// (MCP's Streamable HTTP at /mcp), handed in at startup by the composition root, so
// that the HTTP front end serves it without depending on it. The service has already
// read the request and checked its caller's role, Host and Origin.
//
// Threading: called on the service's event-loop thread.
#pragma once

#include <string>
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace trtwatch::service {

// Who sent the request: a user of the service (empty: no credentials asked for), and
// whether they may act on anyone's builds (an admin, or nobody known).
struct HostedCaller {
  std::string name;
  bool admin = true;
};

class HostedEndpoint {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;

  virtual ~HostedEndpoint() = default;
  // Answers `request` from `caller` on `stream`; returns whether the connection stays open.
  virtual boost::asio::awaitable<bool> Serve(boost::beast::tcp_stream& stream, const Request& request,
                                             const HostedCaller& caller) = 0;
};

}  // namespace trtwatch::service
