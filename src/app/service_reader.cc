#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "app/service_reader.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>

#include "service/server.h"

namespace trtwatch::app {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

constexpr auto kServiceTimeout = std::chrono::seconds(30);

struct HostPort {
  std::string host;
  std::string port;
  std::string error;
};

// "http://HOST[:PORT][/]" (IPv6 in brackets); port 80 when absent.
HostPort ParseUrl(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  const std::string fix = "; give the service's address as http://HOST:PORT (what `trtwatch serve` prints)";
  if (url.rfind(kScheme, 0) != 0) return {"", "", "--service \"" + url + "\" is not an http:// URL" + fix};
  std::string rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.empty() || rest.find('/') != std::string::npos) {
    return {"", "", "--service \"" + url + "\" must name a host and port only" + fix};
  }
  const size_t bracket = rest.rfind(']');
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || (bracket != std::string::npos && colon < bracket)) {
    return {rest[0] == '[' ? rest.substr(1, bracket - 1) : rest, "80", ""};
  }
  std::string host = rest.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  return {host, rest.substr(colon + 1), ""};
}

}  // namespace

ServiceAnswer GetFromService(const std::string& url, const std::string& target, const std::string& token_file) {
  ServiceAnswer answer;
  const HostPort where = ParseUrl(url);
  if (!where.error.empty()) return {ServiceAnswer::Outcome::kBadOption, 0, "", where.error};
  std::string token;
  if (!token_file.empty()) {
    std::string error;
    if (!service::ReadTokenFile(token_file, &token, &error)) return {ServiceAnswer::Outcome::kBadOption, 0, "", error};
  }
  try {
    asio::io_context io;
    asio::ip::tcp::resolver resolver(io);
    beast::tcp_stream stream(io);
    stream.expires_after(kServiceTimeout);
    stream.connect(resolver.resolve(where.host, where.port));
    http::request<http::empty_body> req{http::verb::get, target, 11};
    req.set(http::field::host, where.host + ":" + where.port);
    req.set(http::field::accept, "application/json");
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxServiceBody);
    http::read(stream, buffer, parser);
    answer.outcome = ServiceAnswer::Outcome::kAnswered;
    answer.status = static_cast<int>(parser.get().result_int());
    answer.body = std::move(parser.get().body());
    beast::error_code ignored;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  } catch (const std::exception& e) {
    answer.outcome = ServiceAnswer::Outcome::kUnreachable;
    answer.error = "cannot read from the service at " + url + ": " + e.what() + "; is `trtwatch serve` running there?";
  }
  return answer;
}

}  // namespace trtwatch::app
