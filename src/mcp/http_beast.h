// The Beast side of HttpEndpoint: what `trtwatch serve` calls for a request to /mcp
// (after its token check). Only the composition root (app/mcp_over_http.cc) includes
// this header; the endpoint itself (mcp/http_endpoint.h) knows no Beast.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "mcp/http_endpoint.h"

namespace trtwatch::mcp {

// Answers one request to /mcp on `stream` from `caller` (the service's user); returns
// whether the connection stays open. A session belongs to the user who initialized it:
// another user's request naming it gets the 404 of an unknown session.
boost::asio::awaitable<bool> ServeHttp(boost::beast::tcp_stream& stream,
                                       const boost::beast::http::request<boost::beast::http::string_body>& request,
                                       HttpEndpoint& endpoint, const Caller& caller);

}  // namespace trtwatch::mcp
