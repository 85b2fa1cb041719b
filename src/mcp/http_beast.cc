#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "mcp/http_beast.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <memory>
#include <optional>

#include "core/build_id.h"
#include "mcp/http_session.h"

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

namespace {

// A new session whose messages go to the POST waiting for the request they relate to.
std::unique_ptr<HttpSession> NewHttpSession(HttpEndpoint& endpoint, const Caller& caller) {
  auto hs = std::make_unique<HttpSession>();
  hs->user = caller.name;
  HttpSession* raw = hs.get();
  hs->session = std::make_unique<Session>(endpoint.tools(), endpoint.info(), [raw](const json& m, const json& related) {
    if (related.is_null()) return;
    auto it = raw->channels.find(IdKey(related));
    if (it == raw->channels.end()) return;  // its stream is gone: the client reads the record instead
    HttpChannel* channel = it->second;
    channel->messages.push_back(m.dump(-1, ' ', false, json::error_handler_t::replace));
    if (m.contains("result") || m.contains("error")) {
      channel->done = true;
      raw->channels.erase(it);
    }
    channel->wake.cancel();
  }, caller);
  return hs;
}

// The session a message goes to: a new one for initialize (`id` becomes its id), else
// the one `id` names if `caller` initialized it (MCP's security best practices: a
// session id bound to its user); or the refusal to answer with.
struct FoundSession {
  HttpSession* session = nullptr;
  std::optional<Response> refusal;
};
FoundSession FindSession(HttpEndpoint& endpoint, bool initialize, std::string& id, const Caller& caller) {
  auto& sessions = endpoint.sessions();
  const auto now = std::chrono::steady_clock::now();
  if (initialize) {
    id = NewBuildId().substr(2);
    const auto added = sessions.Add(id, NewHttpSession(endpoint, caller), now);
    if (added.outcome == SessionTable<HttpSession>::AddOutcome::kAllBusy) return {nullptr, AllSessionsBusy()};
    return {added.session, std::nullopt};
  }
  if (id.empty()) {
    return {nullptr, RpcError(http::status::bad_request, rpc_error::kInvalidRequest,
                              "the Mcp-Session-Id header is missing; send initialize first and repeat the session "
                              "id it returns")};
  }
  if (HttpSession* found = sessions.Use(id, now); found && found->user == caller.name) return {found, std::nullopt};
  return {nullptr, RpcError(http::status::not_found, rpc_error::kInvalidRequest,
                            "no MCP session \"" + id + "\" (it ended or expired after " +
                                std::to_string(kSessionIdleTimeout / 1min) + " min idle); initialize a new one")};
}

// DELETE ends a session; methods other than POST are refused. nullopt for a POST.
std::optional<Response> AnswerNonPost(HttpEndpoint& endpoint, const Request& req, const std::string& session_id,
                                      const Caller& caller) {
  if (req.method() == http::verb::delete_) {
    const HttpSession* found = endpoint.sessions().Use(session_id, std::chrono::steady_clock::now());
    if (!found || found->user != caller.name || !endpoint.sessions().Erase(session_id)) {
      return RpcError(http::status::not_found, rpc_error::kInvalidRequest, "no MCP session \"" + session_id + "\"");
    }
    return JsonResponse(http::status::ok, nullptr);
  }
  if (req.method() == http::verb::post) return std::nullopt;
  Response res = RpcError(http::status::method_not_allowed, rpc_error::kInvalidRequest,
                          "use POST for MCP messages (this server sends no messages of its own on GET)");
  res.set(http::field::allow, "POST, DELETE");
  return res;
}

// A request's answer as a stream: its progress notifications, then its response.
awaitable<void> StreamAnswer(beast::tcp_stream& stream, HttpChannel& channel) {
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
}

// The request's answer: plain JSON when it came at once, else a stream (then the
// connection closes). Returns whether the connection stays open.
awaitable<bool> Answer(beast::tcp_stream& stream, HttpEndpoint& endpoint, HttpSession& hs, const Message& message,
                       const std::string& id, bool initialize, bool keep) {
  const std::string key = IdKey(message.id);
  HttpChannel channel(stream.get_executor());
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
  co_await StreamAnswer(stream, channel);
  // The session may have ended meanwhile (DELETE); if not, forget this stream. Its
  // idle time starts now, not when the request came.
  if (HttpSession* again = endpoint.sessions().Use(id, std::chrono::steady_clock::now())) {
    auto it = again->channels.find(key);
    if (it != again->channels.end() && it->second == &channel) again->channels.erase(it);
  }
  boost::system::error_code ec;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  co_return false;
}

}  // namespace

awaitable<bool> ServeHttp(beast::tcp_stream& stream, const Request& req, HttpEndpoint& endpoint,
                          const Caller& caller) {
  const bool keep = req.keep_alive();
  // Origin and Host were checked before auth, as for every request of the service
  // (BrowserCheck in service/request_checks.h).
  std::string id = Header(req, "Mcp-Session-Id");
  if (std::optional<Response> res = AnswerNonPost(endpoint, req, id, caller)) co_return co_await Send(stream, std::move(*res), keep);
  const Message message = ParseMessage(req.body());
  if (message.kind == Message::Kind::kInvalid) {
    co_return co_await Send(stream, JsonResponse(http::status::bad_request, message.error_response), keep);
  }
  const bool initialize = message.kind == Message::Kind::kRequest && message.method == "initialize";
  FoundSession found = FindSession(endpoint, initialize, id, caller);
  if (found.refusal) co_return co_await Send(stream, std::move(*found.refusal), keep);
  HttpSession& hs = *found.session;
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
  if (hs.channels.count(IdKey(message.id))) {
    co_return co_await Send(stream, JsonResponse(http::status::bad_request,
                                                 ErrorResponse(message.id, rpc_error::kInvalidRequest,
                                                               "id " + message.id.dump() + " is already in flight")),
                            keep);
  }
  co_return co_await Answer(stream, endpoint, hs, message, id, initialize, keep);
}

}  // namespace trtwatch::mcp
