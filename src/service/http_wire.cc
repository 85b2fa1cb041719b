#include "service/http_wire.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/write.hpp>
#include <string>

#include "builds/metrics.h"
#include "service/http_request.h"

namespace trtwatch::service {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::use_awaitable;

Response ToResponse(ApiAnswer answer) {
  Response res{static_cast<http::status>(answer.status), 11};
  for (const auto& [name, value] : answer.headers) res.set(name, value);
  res.body() = std::move(answer.body);
  return res;
}

HeadResponse ToHeadResponse(const ApiAnswer& answer) {
  HeadResponse res{static_cast<http::status>(answer.status), 11};
  for (const auto& [name, value] : answer.headers) res.set(name, value);
  return res;
}

awaitable<bool> Send(beast::tcp_stream& stream, Response res, bool keep_alive, bool head_only,
                     builds::Metrics& metrics) {
  res.set(http::field::server, "trtwatch");
  res.keep_alive(keep_alive);
  res.prepare_payload();
  if (head_only) {
    // An event stream's GET has no length to announce.
    if (res[http::field::content_type].starts_with("text/event-stream")) res.erase(http::field::content_length);
    res.body().clear();
  }
  metrics.Request(static_cast<int>(res.result_int()));
  boost::system::error_code ec;
  stream.expires_after(kWriteTimeout);
  co_await http::async_write(stream, res, asio::redirect_error(use_awaitable, ec));
  co_return !ec && keep_alive;
}

awaitable<bool> SendHeader(beast::tcp_stream& stream, HeadResponse res, bool keep_alive, builds::Metrics& metrics) {
  res.set(http::field::server, "trtwatch");
  res.keep_alive(keep_alive);
  metrics.Request(static_cast<int>(res.result_int()));
  http::response_serializer<http::empty_body> serializer(res);
  boost::system::error_code ec;
  stream.expires_after(kWriteTimeout);
  co_await http::async_write_header(stream, serializer, asio::redirect_error(use_awaitable, ec));
  co_return !ec;
}

awaitable<void> SendContinue(beast::tcp_stream& stream) {
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  boost::system::error_code ec;
  stream.expires_after(kWriteTimeout);
  co_await asio::async_write(stream, asio::buffer(kContinue.data(), kContinue.size()),
                             asio::redirect_error(use_awaitable, ec));
  stream.expires_after(kIdleTimeout);
}

bool ClientWentAway(const boost::system::error_code& ec) {
  return ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::operation_aborted;
}

std::string_view HeaderValue(const Request& req, http::field field) {
  auto it = req.find(field);
  return it == req.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
}

std::string_view HeaderValue(const Request& req, std::string_view name) {
  auto it = req.find(beast::string_view(name.data(), name.size()));
  return it == req.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
}

ApiAnswer TooLarge(uint64_t limit, const ServerOptions& options) {
  if (limit == options.max_upload_size && limit != options.body_limit) {
    return ErrorAnswer(413, "the upload is larger than " + std::to_string(limit) +
                                " bytes (--max-upload-size); send a smaller file or start the service with a larger "
                                "--max-upload-size");
  }
  return ErrorAnswer(413, "the request body is larger than " + std::to_string(limit) + " bytes; send a smaller request");
}

ApiAnswer HeadReadError(const boost::system::error_code& ec, std::string_view parsed_target,
                        const ServerOptions& options) {
  if (ec == http::error::body_limit) return TooLarge(options.max_upload_size, options);  // over every route's limit
  if (ec == http::error::bad_transfer_encoding || ec == http::error::bad_content_length) {
    // The parser's own framing checks: a repeated Transfer-Encoding, one with Content-Length.
    return ErrorAnswer(400, "the body's length cannot be determined: " + ec.message() +
                                " (RFC 9112 §6.1, §6.3); send one Transfer-Encoding: chunked or one Content-Length");
  }
  if (ec != http::error::header_limit && ec != http::error::buffer_overflow) {
    return ErrorAnswer(400, "malformed HTTP request: " + ec.message());
  }
  // The parser keeps only what it has not parsed: the request line, once read, is gone
  // from the buffer but its target is in the message.
  if (OversizedHeadStatus(parsed_target) == 414) {
    return ErrorAnswer(414, "the request line is longer than " + std::to_string(kTargetLimit) +
                                " bytes (RFC 9112 §3); shorten the URL");
  }
  return ErrorAnswer(431, "the request head is larger than " + std::to_string(kHeaderLimit) +
                              " bytes (RFC 6585 §5); send fewer or shorter header fields");
}

ApiAnswer BodyReadError(const boost::system::error_code& ec, uint64_t limit, const ServerOptions& options) {
  if (ec == http::error::body_limit) return TooLarge(limit, options);
  if (ec == http::error::buffer_overflow || ec == http::error::bad_chunk_extension) {
    return ErrorAnswer(400, "a chunk-size line, its extensions or the trailers are too long or malformed (at most " +
                                std::to_string(kChunkExtensionLimit) + " bytes of extensions, RFC 9112 §7.1.1)");
  }
  if (ec == http::error::header_limit) return ErrorAnswer(431, "the trailer section is too large (RFC 6585 §5)");
  return ErrorAnswer(400, "malformed HTTP request: " + ec.message());
}

}  // namespace trtwatch::service
