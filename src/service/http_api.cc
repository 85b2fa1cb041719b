#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "service/http_api.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <optional>

#include "builds/metrics.h"
#include "service/access_check.h"
#include "service/api_audit.h"
#include "service/api_builds.h"
#include "service/api_context.h"
#include "service/api_events.h"
#include "service/api_groups.h"
#include "service/api_history.h"
#include "service/api_models.h"
#include "service/api_timing_caches.h"
#include "service/api_status.h"
#include "service/api_ui.h"
#include "service/hosted_endpoint.h"
#include "service/http_request.h"
#include "service/http_transfer.h"
#include "service/http_wire.h"
#include "service/request_checks.h"
#include "service/route_table.h"
#include "service/sse_hubs.h"

namespace trtwatch::service {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;
using asio::use_awaitable;
using namespace std::chrono_literals;

namespace {

constexpr auto kLingerTime = 2s;  // after a refusal, how long the rest of a request is read and dropped
constexpr size_t kLingerBytes = 1024 * 1024;  // and how much of it
constexpr int kAcceptBatch = 1024;  // connections taken from the listen backlog per wake-up

// What follows one request on its connection.
enum class Next {
  kRequest,      // the next request
  kClose,        // closing: nothing more to read
  kCloseLinger,  // closing after a refusal: the client may still be sending its request
};

Method MethodOf(http::verb verb) {
  switch (verb) {
    case http::verb::get:
    case http::verb::head:  // GET without the body (RFC 9110 §9.3.2)
      return Method::kGet;
    case http::verb::post:
      return Method::kPost;
    case http::verb::put:
      return Method::kPut;
    case http::verb::delete_:
      return Method::kDelete;
    default:
      return Method::kOther;
  }
}

std::string_view TargetOf(const Request& req) { return {req.target().data(), req.target().size()}; }
std::string_view PathOf(const Request& req) { return TargetOf(req).substr(0, TargetOf(req).find('?')); }

// The function that answers a route whole: route_table.h's last column.
using ApiHandler = ApiAnswer (*)(ApiContext& api, const ApiRequest& req);
ApiHandler HandlerOf(Endpoint endpoint) {
  switch (endpoint) {
#define TRTWATCH_ROUTE_HANDLER(methods, pattern, name, access, delivery, handler) \
  case Endpoint::name:                                                            \
    return handler;
    TRTWATCH_SERVICE_ROUTES(TRTWATCH_ROUTE_HANDLER)
#undef TRTWATCH_ROUTE_HANDLER
    case Endpoint::kNotFound:
      break;
  }
  return nullptr;
}

// PUT /models/{name} and /models/{name}/{file}: bodies that stream to the artifact store.
bool IsUpload(const Request& req, const Route& route) {
  const RouteEntry* entry = EntryOf(route.endpoint);
  return req.method() == http::verb::put && entry && entry->delivery == Delivery::kUpload;
}

ExpectedDigest ExpectedDigestOf(const Request& req) {
  auto optional_header = [&req](std::string_view name) -> std::optional<std::string_view> {
    auto it = req.find(beast::string_view(name.data(), name.size()));
    if (it == req.end()) return std::nullopt;
    return std::string_view(it->value().data(), it->value().size());
  };
  return ExpectedSha256(optional_header("Content-Digest"), optional_header("X-Content-SHA256"));
}

// The POSTs whose body is JSON: a build request, a cancel, a sign-in, an MCP message.
bool TakesJsonBody(http::verb method, std::string_view path, const Route& route) {
  if (method != http::verb::post) return false;
  const Endpoint endpoint = route.endpoint;
  return path == "/ui/session" || endpoint == Endpoint::kBuilds || endpoint == Endpoint::kBuildCancel ||
         endpoint == Endpoint::kGroupCancel || endpoint == Endpoint::kMcp;
}

// A stated Content-Type must be JSON; none is fine only without a body (a bare cancel).
bool AcceptableJsonType(const Request& req, bool has_body) {
  auto it = req.find(http::field::content_type);
  if (it == req.end()) return !has_body;
  return IsJsonMediaType(std::string_view(it->value().data(), it->value().size()));
}

// Closes our side. After a refusal the client may still be sending its request: that
// is read and dropped for a moment, since closing with unread bytes resets the
// connection and the reset can destroy the answer before the client reads it.
awaitable<void> Close(beast::tcp_stream& stream, bool linger) {
  boost::system::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  if (!linger || !stream.socket().is_open()) co_return;
  stream.expires_after(kLingerTime);
  std::array<char, 4096> sink;
  size_t dropped = 0;
  while (!ec && dropped < kLingerBytes) {
    dropped += co_await stream.async_read_some(asio::buffer(sink), asio::redirect_error(use_awaitable, ec));
  }
}

}  // namespace

class HttpApi::Impl {
 public:
  Impl(asio::io_context& io, const ServerOptions& options, BuildManager& manager, RecordStore& store,
       ArtifactStore& artifacts, Metrics& metrics, builds::AuditLog& audit, SseHubs& hubs, UsersSource users,
       ConnectionCaps caps, HostedEndpoint& mcp)
      : io_(io),
        hubs_(hubs),
        mcp_(mcp),
        api_{options, manager, store, artifacts, metrics, audit, std::move(users), caps.connections,
             caps.sse_clients} {}

  awaitable<void> Accept(tcp::acceptor& acceptor) {
    auto backoff = 10ms;
    while (true) {
      boost::system::error_code ec;
      tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(use_awaitable, ec));
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      if (ec) {
        // Out of descriptors (EMFILE/ENFILE), usually: back off, up to a second, rather
        // than spin; connections wait in the listen backlog meanwhile.
        api_.metrics.AcceptFailed();
        asio::steady_timer pause(io_, backoff);
        co_await pause.async_wait(asio::redirect_error(use_awaitable, ec));
        backoff = std::min<std::chrono::milliseconds>(backoff * 2, 1000ms);
        continue;
      }
      backoff = 10ms;
      asio::co_spawn(io_, Connection(std::move(socket)), asio::detached);
      AcceptWaiting(acceptor);
    }
  }

  // After one accept, every connection already waiting, up to kAcceptBatch, in one go:
  // a burst of clients leaves the listen backlog as fast as it fills, and no SYN is
  // dropped. Nothing is done for a connection here but start its coroutine (posted,
  // so it runs after the batch).
  void AcceptWaiting(tcp::acceptor& acceptor) {
    boost::system::error_code ec;
    if (!acceptor.non_blocking()) acceptor.non_blocking(true, ec);  // would_block, not a wait, when none is left
    for (int i = 0; i < kAcceptBatch && !ec; ++i) {
      tcp::socket socket = acceptor.accept(io_, ec);
      if (!ec) asio::co_spawn(io_, Connection(std::move(socket)), asio::detached);
    }
    // An error other than would_block (out of descriptors) comes again at the next
    // async_accept, which backs off.
  }

  void set_stopping() {
    api_.stopping = true;
    hubs_.SetStopping();
  }

 private:
  awaitable<void> Connection(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    // Bounded: the unparsed bytes of a request (its head, a chunk-size line, the
    // trailers) never take more than this, whatever the client sends.
    beast::flat_buffer buffer(kReadBufferLimit);
    ++connections_;
    struct Count {
      int64_t& n;
      ~Count() { --n; }
    } count{connections_};
    // Over the cap (event streams handed to the hubs count too): answer the first
    // request with 503 and close, so that descriptors stay for the builds' pipes and
    // the store.
    const bool over_cap = connections_ + hubs_.clients() > api_.max_connections;
    Next next = Next::kRequest;
    while (next == Next::kRequest) next = co_await ServeOne(stream, buffer, over_cap);
    co_await Close(stream, next == Next::kCloseLinger);
  }

  // Reads one request's head and checks it, then its body, and answers.
  awaitable<Next> ServeOne(beast::tcp_stream& stream, beast::flat_buffer& buffer, bool over_cap) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    // The largest body any route takes, so that the head is read whatever its
    // Content-Length; each route's own limit is checked with the head.
    parser.body_limit(std::max<uint64_t>(api_.options.body_limit, api_.options.max_upload_size));
    // Held by reference: lives as long as this frame, through the body's read.
    auto chunk_extension_limit = [](uint64_t, beast::string_view extensions, boost::system::error_code& e) {
      if (extensions.size() > kChunkExtensionLimit) e = http::error::bad_chunk_extension;
    };
    parser.on_chunk_header(chunk_extension_limit);
    boost::system::error_code ec;
    stream.expires_after(kIdleTimeout);
    co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
    if (ClientWentAway(ec)) co_return Next::kClose;
    // From here on every close follows a refusal.
    if (ec) co_return co_await Refuse(stream, HeadReadError(ec, TargetOf(parser.get()), api_.options));
    Request& req = parser.get();
    if (over_cap) {
      api_.metrics.ConnectionRefused();
      co_return co_await Refuse(stream,
                                RetryLater(503, "open connections", api_.max_connections, "--max-connections"));
    }
    const RequestHead head = HeadOf(req);
    if (HeadRefusal r = CheckHead(head)) co_return co_await Refuse(stream, ErrorAnswer(r.status, r.message));
    const bool has_body = !parser.is_done();
    const Route route = RouteOf(PathOf(req));
    const AccessDecision access = CheckAccessOf(req, route, stream);
    if (std::optional<ApiAnswer> refused =
            RefusedBeforeBody(req, route, access, has_body, parser.content_length().value_or(0))) {
      // A body not read cannot be skipped reliably: the connection closes.
      const bool open = co_await SendAnswer(stream, std::move(*refused), req.keep_alive() && !has_body);
      co_return open ? Next::kRequest : Next::kCloseLinger;
    }
    const std::string caller = access.caller ? access.caller->name : std::string();
    if (IsUpload(req, route)) {  // the body streams to a file, never into memory
      const bool open = co_await ReceiveUpload(api_, stream, buffer, parser, route, ExpectedDigestOf(req),
                                               ExpectsContinue(head), caller);
      co_return open ? Next::kRequest : Next::kCloseLinger;
    }
    co_return co_await ReadBodyAndAnswer(stream, buffer, parser, ExpectsContinue(head), route, caller);
  }

  awaitable<Next> ReadBodyAndAnswer(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                    http::request_parser<http::string_body>& parser, bool expects_continue,
                                    const Route& route, const std::string& caller) {
    parser.body_limit(api_.options.body_limit);  // a chunked body is cut off there
    if (!parser.is_done()) {
      if (expects_continue) co_await SendContinue(stream);
      boost::system::error_code ec;
      co_await http::async_read(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
      if (ClientWentAway(ec)) co_return Next::kCloseLinger;
      if (ec) co_return co_await Refuse(stream, BodyReadError(ec, api_.options.body_limit, api_.options));
    }
    co_return co_await Dispatch(stream, parser.get(), route, caller) ? Next::kRequest : Next::kClose;
  }

  // Answers and closes.
  awaitable<Next> Refuse(beast::tcp_stream& stream, ApiAnswer answer) {
    co_await SendAnswer(stream, std::move(answer), false);
    co_return Next::kCloseLinger;
  }

  awaitable<bool> SendAnswer(beast::tcp_stream& stream, ApiAnswer answer, bool keep_alive, bool head_only = false) {
    co_return co_await Send(stream, ToResponse(std::move(answer)), keep_alive, head_only, api_.metrics);
  }

  bool KeepAlive(const Request& req) const { return req.keep_alive() && !api_.stopping; }

  // Why a request is refused on its head alone, before its body is read (so that no
  // client gets to send a body it is not allowed to), or nullopt.
  std::optional<ApiAnswer> RefusedBeforeBody(const Request& req, const Route& route, const AccessDecision& access,
                                             bool has_body, uint64_t content_length) {
    const std::string browser = BrowserCheck(HeaderValue(req, http::field::origin), HeaderValue(req, http::field::host),
                                             api_.users.required(), api_.options);
    if (!browser.empty()) return ErrorAnswer(403, browser);
    const std::string_view path = PathOf(req);
    if (access.refusal) return access.refusal;
    const bool upload = IsUpload(req, route);
    const uint64_t limit = upload ? api_.options.max_upload_size : api_.options.body_limit;
    if (content_length > limit) return TooLarge(limit, api_.options);  // RFC 9110 §15.5.14, before the body is read
    const std::optional<ExpectedDigest> digest = upload ? std::optional(ExpectedDigestOf(req)) : std::nullopt;
    if (std::optional<ApiAnswer> bad = RefusedModelRequest(route, digest ? &*digest : nullptr)) return bad;
    if (upload && access.caller) {
      if (std::optional<ApiAnswer> theirs = ModelNotTheirs(api_, UploadTargetOf(route).model, access.caller->name)) {
        return theirs;
      }
    }
    if (TakesJsonBody(req.method(), path, route) && !AcceptableJsonType(req, has_body)) {
      ApiAnswer answer = ErrorAnswer(415, "send the body as JSON with \"Content-Type: application/json\"");
      answer.Set("Accept", "application/json");  // RFC 9110 §15.5.16
      return answer;
    }
    return std::nullopt;
  }

  // The hosted endpoint's view of `caller`: an admin, or nobody known (no credentials
  // asked for), may act on anyone's builds.
  HostedCaller HostedCallerOf(std::string_view caller) {
    const User* user = caller.empty() ? nullptr : CurrentUsers(api_).ByName(caller);
    return {std::string(caller), caller.empty() || (user != nullptr && user->role == Role::kAdmin)};
  }

  // Who calls, and whether the route's access (route_table.h, roles.h) lets them: a
  // trusted proxy's identity header, a dashboard sign-in or the bearer token. The
  // dashboard's paths (none an API route, route_table_test) have no entry: public.
  AccessDecision CheckAccessOf(const Request& req, const Route& route, beast::tcp_stream& stream) {
    if (!api_.users.required()) return {};
    Credentials credentials;
    if (!api_.options.trusted_proxies.empty()) {
      boost::system::error_code ec;
      const tcp::endpoint peer = stream.socket().remote_endpoint(ec);
      auto it = req.find(beast::string_view(api_.options.identity_header));
      const std::optional<std::string_view> header =
          it == req.end() ? std::nullopt : std::optional(std::string_view(it->value().data(), it->value().size()));
      credentials.proxy = TrustedProxyIdentity(ec ? std::string() : peer.address().to_string(), header,
                                               api_.options.trusted_proxies, api_.options.identity_header);
    }
    credentials.session_user = UiSessionUser(api_, HeaderValue(req, http::field::cookie));
    if (auto it = req.find(http::field::authorization); it != req.end()) {
      credentials.bearer = BearerToken(std::string_view(it->value().data(), it->value().size()));
    }
    // A path that is neither the API's nor the dashboard's answers 404 to viewers only.
    static constexpr RouteEntry kUnknownPath{"", "(an unknown path)", Endpoint::kNotFound, Access::kViewer,
                                             Delivery::kAnswer};
    const RouteEntry* entry = EntryOf(route.endpoint);
    if (!entry && !IsUiPath(PathOf(req))) entry = &kUnknownPath;
    return CheckAccess(entry, MethodOf(req.method()), credentials, CurrentUsers(api_), true);
  }

  // Answers a request whose head and body were read; returns whether the connection
  // stays open. HEAD is GET without the body (RFC 9110 §9.3.2).
  awaitable<bool> Dispatch(beast::tcp_stream& stream, const Request& req, const Route& route,
                           std::string_view caller) {
    const bool head_only = req.method() == http::verb::head;
    const ApiRequest request{MethodOf(req.method()), TargetOf(req), PathOf(req), req.body(),
                             HeaderValue(req, http::field::cookie), route, HeaderValue(req, "Want-Repr-Digest"), caller};
    const RouteEntry* entry = EntryOf(route.endpoint);
    if (!entry) {  // the dashboard's, or nothing
      // No conditional operator inside co_await: g++ 12 destroys its temporary twice.
      std::optional<ApiAnswer> answer = UiAnswer(api_, request);
      if (!answer) answer = NoSuchEndpoint(request.path);
      co_return co_await SendAnswer(stream, std::move(*answer), KeepAlive(req), head_only);
    }
    switch (entry->delivery) {
      case Delivery::kHosted: {  // MCP over Streamable HTTP (service/hosted_endpoint.h)
        if (head_only) co_return co_await SendAnswer(stream, MethodNotAllowed(entry->methods), req.keep_alive(), true);
        const HostedCaller hosted_caller = HostedCallerOf(caller);  // named, not a temporary inside co_await
        co_return co_await mcp_.Serve(stream, req, hosted_caller);
      }
      case Delivery::kEventStream:
        if (head_only) {
          co_return co_await SendAnswer(stream, EventStreamHead(api_, route), KeepAlive(req), true);
        }
        if (request.method != Method::kGet) break;
        co_await StartEventStream(stream, req, request);
        co_return false;
      case Delivery::kDownload:
        if (request.method == Method::kGet) {
          co_return co_await SendDownload(api_, stream, PlanAnyDownload(route, req), KeepAlive(req), head_only);
        }
        if (HandlerOf(route.endpoint) != nullptr) break;  // DELETE /timing-caches/{name}
        co_return co_await SendAnswer(stream, MethodNotAllowed(entry->methods), req.keep_alive());
      case Delivery::kUpload:  // GET /models/{name}/{file} downloads what PUT uploaded
        if (request.method == Method::kGet && route.endpoint == Endpoint::kModelFile) {
          co_return co_await SendDownload(api_, stream, PlanDownload(api_, route, DownloadHeadersOf(req)),
                                          KeepAlive(req), head_only);
        }
        break;
      case Delivery::kAnswer:
        break;
    }
    co_return co_await SendAnswer(stream, HandlerOf(route.endpoint)(api_, request), KeepAlive(req), head_only);
  }

  DownloadPlan PlanAnyDownload(const Route& route, const Request& req) {
    if (route.endpoint == Endpoint::kTimingCache) return PlanTimingCacheDownload(api_, route, DownloadHeadersOf(req));
    return PlanDownload(api_, route, DownloadHeadersOf(req));
  }

  static DownloadHeaders DownloadHeadersOf(const Request& req) {
    return {HeaderValue(req, http::field::if_none_match), HeaderValue(req, http::field::range),
            HeaderValue(req, http::field::if_range), HeaderValue(req, "Want-Repr-Digest")};
  }

  // GET /builds/{id}/events and /builds/changes: checked here, then written by a hub.
  awaitable<void> StartEventStream(beast::tcp_stream& stream, const Request& req, const ApiRequest& request) {
    std::optional<ApiAnswer> refused;
    if (request.route.endpoint == Endpoint::kBuildEvents) {
      std::optional<std::string_view> last_event_id;
      if (auto it = req.find("Last-Event-ID"); it != req.end()) {
        last_event_id = std::string_view(it->value().data(), it->value().size());
      }
      refused = StartBuildEvents(api_, hubs_, request, last_event_id, [&](size_t hub, SseStreamSpec spec) {
        hubs_.StartBuildStream(hub, stream.release_socket(), std::move(spec));
      });
    } else {
      refused = StartRecordChanges(api_, hubs_, [&](size_t hub) { hubs_.StartRecordStream(hub, stream.release_socket()); });
    }
    if (refused) co_await SendAnswer(stream, std::move(*refused), false);
  }

  asio::io_context& io_;
  SseHubs& hubs_;
  HostedEndpoint& mcp_;
  ApiContext api_;
  int64_t connections_ = 0;
};

HttpApi::HttpApi(asio::io_context& io, const ServerOptions& options, BuildManager& manager, RecordStore& store,
                 ArtifactStore& artifacts, Metrics& metrics, builds::AuditLog& audit, SseHubs& hubs, UsersSource users,
                 ConnectionCaps caps, HostedEndpoint& mcp)
    : impl_(std::make_unique<Impl>(io, options, manager, store, artifacts, metrics, audit, hubs, std::move(users), caps,
                                   mcp)) {}

HttpApi::~HttpApi() = default;

awaitable<void> HttpApi::Accept(tcp::acceptor& acceptor) { return impl_->Accept(acceptor); }

void HttpApi::set_stopping() { impl_->set_stopping(); }

}  // namespace trtwatch::service
