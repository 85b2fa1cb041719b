// The wire side shared by the service's Beast files (http_api.cc, http_transfer.cc):
// the message types, timeouts, writing an answer, and the answers to read errors.
// Included by those files only; the resources' files see api_answer.h instead.
//
// Threading: the service's event-loop thread.
#pragma once

#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <string_view>

#include "service/api_answer.h"
#include "service/server_options.h"

namespace trtwatch::builds {
class Metrics;
}

namespace trtwatch::service {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Response = boost::beast::http::response<boost::beast::http::string_body>;
using HeadResponse = boost::beast::http::response<boost::beast::http::empty_body>;

inline constexpr std::chrono::seconds kIdleTimeout{60};   // a keep-alive connection with no request
inline constexpr std::chrono::seconds kWriteTimeout{30};  // a client that takes no bytes for this long is gone

// The answer as a Beast response (its fields in order).
[[nodiscard]] Response ToResponse(ApiAnswer answer);
// An answer's status and fields, for a response whose body is sent apart (or none).
[[nodiscard]] HeadResponse ToHeadResponse(const ApiAnswer& answer);

// Writes a response; returns whether the connection stays open.
// `head_only`: the answer to HEAD, its Content-Length that of the body not sent.
boost::asio::awaitable<bool> Send(boost::beast::tcp_stream& stream, Response res, bool keep_alive, bool head_only,
                                  builds::Metrics& metrics);
// Writes a response that has no body here (a 304, or the head of a streamed file);
// returns whether it was written.
boost::asio::awaitable<bool> SendHeader(boost::beast::tcp_stream& stream, HeadResponse res, bool keep_alive,
                                        builds::Metrics& metrics);
// "100 Continue", for a client that waits for it before sending the body.
boost::asio::awaitable<void> SendContinue(boost::beast::tcp_stream& stream);

// Whether a read ended because the client went away (or stayed silent too long).
[[nodiscard]] bool ClientWentAway(const boost::system::error_code& ec);
// A header's value; empty when absent.
[[nodiscard]] std::string_view HeaderValue(const Request& req, boost::beast::http::field field);
// The same for a field Beast has no name for (e.g. "Want-Repr-Digest").
[[nodiscard]] std::string_view HeaderValue(const Request& req, std::string_view name);

// The answers to a body over `limit`, and to a failed read of a head or a body.
[[nodiscard]] ApiAnswer TooLarge(uint64_t limit, const ServerOptions& options);
[[nodiscard]] ApiAnswer HeadReadError(const boost::system::error_code& ec, std::string_view parsed_target,
                                      const ServerOptions& options);
[[nodiscard]] ApiAnswer BodyReadError(const boost::system::error_code& ec, uint64_t limit,
                                      const ServerOptions& options);

}  // namespace trtwatch::service
