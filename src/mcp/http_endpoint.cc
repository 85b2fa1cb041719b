#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <deque>

#include "core/build_id.h"
#include "mcp/http_beast.h"

namespace trtwatch::mcp {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::use_awaitable;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
using namespace std::chrono_literals;

namespace {

constexpr auto kWriteTimeout = 30s;
constexpr auto kHeartbeat = 15s;

std::string Header(const Request& req, std::string_view name) {
  auto it = req.find(beast::string_view(name.data(), name.size()));
  return it == req.end() ? std::string() : std::string(it->value().data(), it->value().size());
}

}  // namespace

struct HttpEndpoint::Channel {
  explicit Channel(const asio::any_io_executor& executor) : wake(executor) {}
  asio::steady_timer wake;
  std::deque<std::string> messages;  // serialised, not yet written
  bool done = false;                 // the response is among them
};

struct HttpEndpoint::HttpSession {
  ~HttpSession() {
    session.reset();  // sends nothing more
    for (auto& [key, channel] : channels) {  // their streams end
      channel->done = true;
      channel->wake.cancel();
    }
  }
  bool busy() const { return !channels.empty(); }  // a request in flight: never evicted
  std::unique_ptr<Session> session;
  std::map<std::string, Channel*> channels;  // IdKey(request id) -> the POST waiting for it
};

HttpEndpoint::HttpEndpoint(Tools& tools, ServerInfo info)
    : tools_(tools), info_(std::move(info)), sessions_(kMaxSessions, kSessionIdleTimeout) {}
HttpEndpoint::~HttpEndpoint() = default;

namespace {

Response JsonResponse(http::status status, const json& body) {
  Response res{status, 11};
  res.set(http::field::content_type, "application/json");
  res.set(http::field::cache_control, "no-store");
  res.body() = body.is_null() ? std::string() : body.dump(-1, ' ', false, json::error_handler_t::replace);
  return res;
}

Response RpcError(http::status status, int code, const std::string& message) {
  return JsonResponse(status, ErrorResponse(nullptr, code, message));
}

// Every session has a request in flight: none may be dropped for a new one.
Response AllSessionsBusy() {
  Response res = RpcError(http::status::service_unavailable, rpc_error::kInvalidRequest,
                          "all " + std::to_string(kMaxSessions) +
                              " MCP sessions have a request in flight; retry later, or end an unused session "
                              "with DELETE /mcp");
  res.set(http::field::retry_after, "5");
  return res;
}

awaitable<bool> Send(beast::tcp_stream& stream, Response res, bool keep_alive) {
  res.set(http::field::server, "trtwatch");
  res.keep_alive(keep_alive);
  res.prepare_payload();
  boost::system::error_code ec;
  stream.expires_after(kWriteTimeout);
  co_await http::async_write(stream, res, asio::redirect_error(use_awaitable, ec));
  co_return !ec && keep_alive;
}

}  // namespace

awaitable<bool> ServeHttp(beast::tcp_stream& stream, const Request& req, HttpEndpoint& endpoint) {
  const bool keep = req.keep_alive();
  // Origin and Host were checked before auth, as for every request of the service
  // (BrowserCheck in service/server.cc).
  auto& sessions = endpoint.sessions();
  const std::string session_id = Header(req, "Mcp-Session-Id");
  if (req.method() == http::verb::delete_) {
    if (!sessions.Erase(session_id)) {
      co_return co_await Send(stream, RpcError(http::status::not_found, rpc_error::kInvalidRequest,
                                               "no MCP session \"" + session_id + "\""),
                              keep);
    }
    co_return co_await Send(stream, JsonResponse(http::status::ok, nullptr), keep);
  }
  if (req.method() != http::verb::post) {
    Response res = RpcError(http::status::method_not_allowed, rpc_error::kInvalidRequest,
                            "use POST for MCP messages (this server sends no messages of its own on GET)");
    res.set(http::field::allow, "POST, DELETE");
    co_return co_await Send(stream, std::move(res), keep);
  }
  const Message message = ParseMessage(req.body());
  if (message.kind == Message::Kind::kInvalid) {
    co_return co_await Send(stream, JsonResponse(http::status::bad_request, message.error_response), keep);
  }
  const bool initialize = message.kind == Message::Kind::kRequest && message.method == "initialize";
  const auto now = std::chrono::steady_clock::now();
  std::string id = session_id;
  HttpEndpoint::HttpSession* found = nullptr;
  if (initialize) {
    id = NewBuildId().substr(2);
    auto hs = std::make_unique<HttpEndpoint::HttpSession>();
    HttpEndpoint::HttpSession* raw = hs.get();
    hs->session = std::make_unique<Session>(endpoint.tools(), endpoint.info(), [raw](const json& m, const json& related) {
      if (related.is_null()) return;
      auto it = raw->channels.find(IdKey(related));
      if (it == raw->channels.end()) return;  // its stream is gone: the client reads the record instead
      HttpEndpoint::Channel* channel = it->second;
      channel->messages.push_back(m.dump(-1, ' ', false, json::error_handler_t::replace));
      if (m.contains("result") || m.contains("error")) {
        channel->done = true;
        raw->channels.erase(it);
      }
      channel->wake.cancel();
    });
    const auto added = sessions.Add(id, std::move(hs), now);
    if (added.outcome == SessionTable<HttpEndpoint::HttpSession>::AddOutcome::kAllBusy) {
      co_return co_await Send(stream, AllSessionsBusy(), keep);
    }
    found = added.session;
  } else if (id.empty()) {
    co_return co_await Send(stream, RpcError(http::status::bad_request, rpc_error::kInvalidRequest,
                                             "the Mcp-Session-Id header is missing; send initialize first and "
                                             "repeat the session id it returns"),
                            keep);
  } else {
    found = sessions.Use(id, now);
  }
  if (!found) {
    co_return co_await Send(stream, RpcError(http::status::not_found, rpc_error::kInvalidRequest,
                                             "no MCP session \"" + id + "\" (it ended or expired after " +
                                                 std::to_string(kSessionIdleTimeout / 1min) +
                                                 " min idle); initialize a new one"),
                            keep);
  }
  HttpEndpoint::HttpSession& hs = *found;
  const std::string version = Header(req, "MCP-Protocol-Version");
  if (!initialize && !version.empty() && version != hs.session->protocol_version()) {
    co_return co_await Send(stream, RpcError(http::status::bad_request, rpc_error::kInvalidRequest,
                                             "MCP-Protocol-Version \"" + version + "\" is not the version this "
                                             "session negotiated (" + hs.session->protocol_version() + ")"),
                            keep);
  }
  if (message.kind != Message::Kind::kRequest) {
    hs.session->Receive(message);
    co_return co_await Send(stream, JsonResponse(http::status::accepted, nullptr), keep);
  }
  const std::string key = IdKey(message.id);
  if (hs.channels.count(key)) {
    co_return co_await Send(stream, JsonResponse(http::status::bad_request,
                                                 ErrorResponse(message.id, rpc_error::kInvalidRequest,
                                                               "id " + message.id.dump() + " is already in flight")),
                            keep);
  }
  HttpEndpoint::Channel channel(stream.get_executor());
  hs.channels[key] = &channel;
  hs.session->Receive(message);
  if (channel.done && channel.messages.size() == 1) {  // answered at once: plain JSON
    Response res{http::status::ok, 11};
    res.set(http::field::content_type, "application/json");
    res.set(http::field::cache_control, "no-store");
    if (initialize) res.set("Mcp-Session-Id", id);
    res.body() = std::move(channel.messages.front());
    co_return co_await Send(stream, std::move(res), keep);
  }
  // A stream: its progress notifications, then its response.
  std::string batch =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\n"
      "Connection: close\r\nX-Accel-Buffering: no\r\nServer: trtwatch\r\n\r\n";
  boost::system::error_code ec;
  while (!ec) {
    while (!channel.messages.empty()) {
      batch += "event: message\ndata: " + channel.messages.front() + "\n\n";
      channel.messages.pop_front();
    }
    if (!batch.empty()) {
      stream.expires_after(kWriteTimeout);
      co_await asio::async_write(stream, asio::buffer(batch), asio::redirect_error(use_awaitable, ec));
      batch.clear();
      continue;
    }
    if (channel.done) break;
    stream.expires_never();
    boost::system::error_code wait_ec;
    channel.wake.expires_after(kHeartbeat);
    co_await channel.wake.async_wait(asio::redirect_error(use_awaitable, wait_ec));
    if (!wait_ec) batch = ": heartbeat\n\n";
  }
  // The session may have ended meanwhile (DELETE); if not, forget this stream. Its
  // idle time starts now, not when the request came.
  if (HttpEndpoint::HttpSession* again = sessions.Use(id, std::chrono::steady_clock::now())) {
    auto it = again->channels.find(key);
    if (it != again->channels.end() && it->second == &channel) again->channels.erase(it);
  }
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  co_return false;
}

}  // namespace trtwatch::mcp
