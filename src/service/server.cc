#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "service/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "mcp/http_beast.h"
#include "mcp/manager_builds.h"
#include "mcp/tools.h"
#include "platform/process_limits.h"
#include "service/assets.h"
#include "sinks/trace_sink.h"
#include "service/build_manager.h"
#include "service/http_request.h"
#include "service/metrics.h"
#include "service/model_paths.h"
#include "service/record_store.h"
#include "service/sse.h"
#include "service/ui_routes.h"
#include "service/ui_session.h"
#include "service/utf8.h"

namespace trtwatch::service {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;
using asio::use_awaitable;
using nlohmann::json;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
using namespace std::chrono_literals;

namespace {

constexpr auto kIdleTimeout = 60s;   // a keep-alive connection with no request
constexpr auto kWriteTimeout = 30s;  // a client that takes no bytes for this long is gone
constexpr auto kHeartbeat = 15s;
constexpr auto kRetentionPeriod = 10min;
constexpr int kRetryMs = 2000;
constexpr size_t kSseCoalesceAt = 256;  // queued events before steps coalesce
constexpr size_t kSseLimit = 4096;      // queued events before a slow client is cut off
constexpr size_t kWriteBatch = 64 * 1024;
constexpr int kSseSendBuffer = 64 * 1024;
constexpr double kUiSessionSeconds = 12 * 3600;  // a browser sign-in lasts a working day
constexpr size_t kUiSessionLimit = 256;

int Usage(const std::string& message) {
  std::fprintf(stderr, "trtwatch serve: %s\n", message.c_str());
  return 2;
}

Response JsonResponse(http::status status, std::string body) {
  Response res{status, 11};
  res.set(http::field::content_type, "application/json");
  res.set(http::field::cache_control, "no-store");
  res.body() = std::move(body);
  return res;
}

Response Error(http::status status, const std::string& message) {
  // Messages quote the client's own bytes (paths, ids, query values): made valid first.
  return JsonResponse(status, json{{"error", ValidUtf8(message)}}.dump(-1, ' ', false, json::error_handler_t::replace));
}

// Over a cap: an error naming it and the flag that raises it, with Retry-After.
Response RetryLater(http::status status, const std::string& what, int64_t cap, const std::string& flag) {
  Response res = Error(status, "too many " + what + " (" + std::to_string(cap) + "); retry later or raise " + flag);
  res.set(http::field::retry_after, "1");
  return res;
}

// The manager's outcomes in HTTP terms: a status, and for the ones worth retrying, a
// Retry-After (seconds).
struct HttpOutcome {
  http::status status;
  int retry_after = 0;
};

HttpOutcome ToHttp(SubmitOutcome outcome) {
  switch (outcome) {
    case SubmitOutcome::kCreated:
      return {http::status::created};
    case SubmitOutcome::kInvalid:
      return {http::status::bad_request};
    case SubmitOutcome::kQueueFull:
      return {http::status::too_many_requests, 10};
    case SubmitOutcome::kShuttingDown:
    case SubmitOutcome::kStorageFailed:
      return {http::status::service_unavailable, 5};
  }
  return {http::status::internal_server_error};
}

HttpOutcome ToHttp(GetOutcome outcome) {
  return {outcome == GetOutcome::kFound ? http::status::ok : http::status::not_found};
}

HttpOutcome ToHttp(CancelOutcome outcome) {
  switch (outcome) {
    case CancelOutcome::kCancelled:
    case CancelOutcome::kCancelling:
      return {http::status::accepted};
    case CancelOutcome::kInvalid:
      return {http::status::bad_request};
    case CancelOutcome::kNotFound:
      return {http::status::not_found};
    case CancelOutcome::kAlreadyFinished:
      return {http::status::conflict};
  }
  return {http::status::internal_server_error};
}

// The record on success, {"error": ...} otherwise.
template <typename Outcome>
Response ApiResponse(ManagerResult<Outcome> r) {
  const HttpOutcome h = ToHttp(r.outcome);
  if (http::to_status_class(h.status) == http::status_class::successful) {
    return JsonResponse(h.status, std::move(r.record));
  }
  Response res = Error(h.status, r.error);
  if (h.retry_after > 0) res.set(http::field::retry_after, std::to_string(h.retry_after));
  return res;
}

// The start of every event stream's response: headers, then how long to wait before
// reconnecting.
std::string SseHead() {
  return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\n"
         "Connection: close\r\nX-Accel-Buffering: no\r\nServer: trtwatch\r\n\r\n" +
         SseRetry(kRetryMs);
}

// One SSE client's side of the fan-out: a bounded queue and a timer used as a wake-up.
// It follows one build's events, or every record change (GET /builds/changes).
class SseStream final : public EventSubscriber, public RecordWatcher {
 public:
  SseStream(const asio::any_io_executor& executor, Metrics& metrics, uint64_t after_seq)
      : wake_(executor), queue_(kSseCoalesceAt, kSseLimit), metrics_(metrics), after_seq_(after_seq) {}

  void OnEvent(const SseItem& item) override {
    // A Last-Event-ID ahead of the live build: what it claims to have is not resent.
    if (overflow_ || item.seq <= after_seq_) return;
    switch (queue_.Push(item)) {
      case SseQueue::PushResult::kCoalesced:
        metrics_.SseEventsDropped(1);
        break;
      case SseQueue::PushResult::kOverflow:
        overflow_ = true;
        break;
      case SseQueue::PushResult::kQueued:
        break;
    }
    wake_.cancel();
  }
  void OnEnd() override {
    ended_ = true;
    wake_.cancel();
  }
  void OnRecord(const SseItem& item) override { OnEvent(item); }
  // Moves queued frames into `batch` until it holds a write's worth.
  void TakeQueued(std::string* batch) {
    while (batch->size() < kWriteBatch) {
      std::optional<SseItem> item = queue_.Pop();
      if (!item) return;
      *batch += *item->frame;
    }
  }

  asio::steady_timer wake_;
  SseQueue queue_;
  bool ended_ = false;
  bool overflow_ = false;

 private:
  Metrics& metrics_;
  const uint64_t after_seq_;
};

class Server {
 public:
  Server(asio::io_context& io, const ServerOptions& options, BuildManager& manager, RecordStore& store,
         Metrics& metrics, std::string token, int64_t max_connections, int64_t max_sse_clients,
         mcp::HttpEndpoint& mcp)
      : io_(io),
        options_(options),
        manager_(manager),
        store_(store),
        metrics_(metrics),
        token_(std::move(token)),
        max_connections_(max_connections),
        max_sse_clients_(max_sse_clients),
        mcp_(mcp) {}

  awaitable<void> Accept(tcp::acceptor& acceptor) {
    auto backoff = 10ms;
    while (true) {
      boost::system::error_code ec;
      tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(use_awaitable, ec));
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      if (ec) {
        // Out of descriptors (EMFILE/ENFILE), usually: back off, up to a second, rather
        // than spin; connections wait in the listen backlog meanwhile.
        metrics_.AcceptFailed();
        asio::steady_timer pause(io_, backoff);
        co_await pause.async_wait(asio::redirect_error(use_awaitable, ec));
        backoff = std::min<std::chrono::milliseconds>(backoff * 2, 1000ms);
        continue;
      }
      backoff = 10ms;
      asio::co_spawn(io_, Session(std::move(socket)), asio::detached);
    }
  }

  int64_t sse_clients() const { return sse_clients_; }
  void set_stopping() {
    stopping_ = true;
    for (SseStream* s : record_streams_) s->wake_.cancel();  // they end now, not at the next heartbeat
  }

 private:
  awaitable<void> Session(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    boost::system::error_code ec;
    ++connections_;
    struct Count {
      int64_t& n;
      ~Count() { --n; }
    } count{connections_};
    // Over the cap: answer the first request with 503 and close, so that descriptors
    // stay for the builds' pipes and the store.
    const bool over_cap = connections_ > max_connections_;
    while (true) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(16 * 1024);
      parser.body_limit(options_.body_limit);
      stream.expires_after(kIdleTimeout);
      co_await http::async_read(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
      if (ec == http::error::body_limit) {
        co_await Send(stream, Error(http::status::payload_too_large,
                                    "the request body is larger than " + std::to_string(options_.body_limit) +
                                        " bytes; send a smaller request"),
                      false);
        break;
      }
      if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::eof ||
          ec == asio::error::connection_reset || ec == asio::error::operation_aborted) {
        break;
      }
      if (ec) {
        co_await Send(stream, Error(http::status::bad_request, "malformed HTTP request: " + ec.message()), false);
        break;
      }
      Request& req = parser.get();
      if (over_cap) {
        metrics_.ConnectionRefused();
        co_await Send(stream, RetryLater(http::status::service_unavailable, "open connections", max_connections_,
                                         "--max-connections"),
                      false);
        break;
      }
      const std::string_view target(req.target().data(), req.target().size());
      const std::string_view path = target.substr(0, target.find('?'));
      const std::string refused = BrowserCheck(HeaderValue(req, http::field::origin), HeaderValue(req, http::field::host),
                                               !token_.empty(), options_);
      if (!refused.empty()) {
        if (!co_await Send(stream, Error(http::status::forbidden, refused), req.keep_alive())) break;
        continue;
      }
      if (std::optional<Response> ui = HandleUi(req, path)) {
        if (!co_await Send(stream, std::move(*ui), req.keep_alive() && !stopping_)) break;
        continue;
      }
      if (!Authorized(req, path)) {
        Response res = Error(http::status::unauthorized,
                             "missing or wrong bearer token; send \"Authorization: Bearer TOKEN\" with the token "
                             "from the server's --token-file");
        res.set(http::field::www_authenticate, "Bearer");
        if (!co_await Send(stream, std::move(res), req.keep_alive())) break;
        continue;
      }
      const Route route = RouteOf(path);
      if (route.endpoint == Endpoint::kMcp) {  // MCP over Streamable HTTP (src/mcp/http_endpoint.cc)
        if (!co_await mcp::ServeHttp(stream, req, mcp_)) break;
        continue;
      }
      if (route.endpoint == Endpoint::kBuildEvents && req.method() == http::verb::get) {
        co_await Events(stream, req, std::string(route.id));
        break;
      }
      if (route.endpoint == Endpoint::kBuildChanges && req.method() == http::verb::get) {
        co_await RecordChanges(stream);
        break;
      }
      Response res = Handle(req, path, target, route);
      if (!co_await Send(stream, std::move(res), req.keep_alive() && !stopping_)) break;
    }
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  // Writes a response; returns whether the connection stays open.
  awaitable<bool> Send(beast::tcp_stream& stream, Response res, bool keep_alive) {
    res.set(http::field::server, "trtwatch");
    res.keep_alive(keep_alive);
    res.prepare_payload();
    metrics_.Request(static_cast<int>(res.result_int()));
    boost::system::error_code ec;
    stream.expires_after(kWriteTimeout);
    co_await http::async_write(stream, res, asio::redirect_error(use_awaitable, ec));
    co_return !ec && keep_alive;
  }

  static std::string_view HeaderValue(const Request& req, http::field field) {
    auto it = req.find(field);
    return it == req.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
  }

  bool Authorized(const Request& req, std::string_view path) {
    if (token_.empty() || path == "/healthz") return true;
    if (HasUiSession(req)) return true;
    auto it = req.find(http::field::authorization);
    if (it == req.end()) return false;
    const std::optional<std::string_view> presented =
        BearerToken(std::string_view(it->value().data(), it->value().size()));
    return presented && TokenMatches(std::string(*presented), token_);
  }

  bool HasUiSession(const Request& req) {
    auto it = req.find(http::field::cookie);
    if (it == req.end()) return false;
    const std::string_view id =
        CookieValue(std::string_view(it->value().data(), it->value().size()), kSessionCookieName);
    return !id.empty() && ui_sessions_.Valid(id, NowUnix());
  }

  // The dashboard: its public files, and the sign-in that trades the --token-file token
  // for a session cookie (POST /ui/session {"token": ...}; DELETE signs out; GET says
  // whether a sign-in is needed). Anything else is the API's: nullopt.
  std::optional<Response> HandleUi(const Request& req, std::string_view path) {
    const http::verb method = req.method();
    if (path == "/ui/session") {
      if (method == http::verb::get) {
        const bool needed = !token_.empty();
        return JsonResponse(http::status::ok,
                            json{{"token_required", needed}, {"signed_in", !needed || HasUiSession(req)}}.dump());
      }
      if (method == http::verb::delete_) {
        auto it = req.find(http::field::cookie);
        if (it != req.end()) {
          ui_sessions_.Revoke(CookieValue(std::string_view(it->value().data(), it->value().size()),
                                          kSessionCookieName));
        }
        Response res = JsonResponse(http::status::ok, json{{"signed_in", false}}.dump());
        res.set(http::field::set_cookie, SessionSetCookie("", 0));
        return res;
      }
      if (method != http::verb::post) return MethodNotAllowed("GET, POST, DELETE");
      // JSON only: a cross-site HTML form cannot send it without a CORS preflight.
      auto type = req.find(http::field::content_type);
      const json body = json::parse(req.body(), nullptr, /*allow_exceptions=*/false);
      if (type == req.end() || type->value().find("application/json") != 0 || !body.is_object() ||
          !body.contains("token") || !body["token"].is_string()) {
        return Error(http::status::bad_request,
                     "send Content-Type: application/json with {\"token\": \"...\"}, the token from the server's "
                     "--token-file");
      }
      if (token_.empty()) return Error(http::status::conflict, "this server needs no sign-in (no --token-file)");
      if (!TokenMatches(body["token"].get<std::string>(), token_)) {
        return Error(http::status::unauthorized, "wrong token; use the one in the server's --token-file");
      }
      Response res = JsonResponse(http::status::ok, json{{"signed_in", true}}.dump());
      res.set(http::field::set_cookie,
              SessionSetCookie(ui_sessions_.Create(NowUnix()), ui_sessions_.lifetime_seconds()));
      return res;
    }
    const std::optional<UiAsset> asset = UiAssetFor(path);
    if (!asset) return std::nullopt;
    if (method != http::verb::get) return MethodNotAllowed("GET");
    Response res{http::status::ok, 11};
    res.set(http::field::content_type, std::string(asset->content_type));
    res.set("Content-Security-Policy", std::string(kUiContentSecurityPolicy));
    res.set("X-Content-Type-Options", "nosniff");
    res.set("Referrer-Policy", "no-referrer");
    res.set(http::field::cache_control, "no-cache");
    res.body() = std::string(asset->body);
    return res;
  }

  static Response MethodNotAllowed(std::string_view allow) {
    Response res = Error(http::status::method_not_allowed,
                         "method not allowed here; use " + std::string(allow));
    res.set(http::field::allow, std::string(allow));
    return res;
  }

  Response Handle(const Request& req, std::string_view path, std::string_view target,
                  const Route& route) {
    const http::verb method = req.method();
    if (route.endpoint == Endpoint::kHealth) {
      if (method != http::verb::get) return MethodNotAllowed("GET");
      if (!manager_.RetryUnsaved()) {
        Response res = JsonResponse(http::status::service_unavailable,
                                    json{{"status", "unhealthy"},
                                         {"store", manager_.storage_error()},
                                         {"running", manager_.running()},
                                         {"queued", manager_.queued()}}
                                        .dump(-1, ' ', false, json::error_handler_t::replace));
        res.set(http::field::retry_after, "5");
        return res;
      }
      return JsonResponse(http::status::ok, json{{"status", stopping_ ? "stopping" : "ok"},
                                                 {"store", "ok"},
                                                 {"running", manager_.running()},
                                                 {"queued", manager_.queued()}}
                                                .dump());
    }
    if (route.endpoint == Endpoint::kMetrics) {
      if (method != http::verb::get) return MethodNotAllowed("GET");
      Response res{http::status::ok, 11};
      res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      res.body() = metrics_.Render(manager_.running(), manager_.queued());
      return res;
    }
    if (route.endpoint == Endpoint::kOpenApi) {
      if (method != http::verb::get) return MethodNotAllowed("GET");
      return JsonResponse(http::status::ok, std::string(OpenApiDocument()));
    }
    if (route.endpoint == Endpoint::kBuilds) {
      if (method == http::verb::post) {
        SubmitResult r = manager_.Submit(req.body());
        const std::string location = r.outcome == SubmitOutcome::kCreated ? "/builds/" + r.id : std::string();
        Response res = ApiResponse(std::move(r));
        if (!location.empty()) res.set(http::field::location, location);
        return res;
      }
      if (method == http::verb::get) return List(target);
      return MethodNotAllowed("GET, POST");
    }
    if (route.endpoint == Endpoint::kBuildChanges) return MethodNotAllowed("GET");
    if (route.endpoint == Endpoint::kBuild || route.endpoint == Endpoint::kBuildCancel ||
        route.endpoint == Endpoint::kBuildEvents || route.endpoint == Endpoint::kBuildTrace) {
      const std::string id(route.id);
      const bool cancel = route.endpoint == Endpoint::kBuildCancel;
      const bool events = route.endpoint == Endpoint::kBuildEvents;
      const bool trace = route.endpoint == Endpoint::kBuildTrace;
      if (!ValidBuildId(id)) {
        return Error(http::status::not_found, "no build \"" + id + "\"; build ids look like b_ and 32 hex digits");
      }
      if (events) return MethodNotAllowed("GET");
      if (trace) {
        if (method != http::verb::get) return MethodNotAllowed("GET");
        return Trace(id);
      }
      if (cancel) {
        if (method != http::verb::post) return MethodNotAllowed("POST");
        return ApiResponse(manager_.Cancel(id, req.body()));
      }
      if (method != http::verb::get) return MethodNotAllowed("GET");
      return ApiResponse(manager_.Get(id));
    }
    return NotFound(path);
  }

  static Response NotFound(std::string_view path) {
    return Error(http::status::not_found, "no such endpoint \"" + std::string(path) +
                                              "\"; see GET /openapi.json for the API");
  }

  Response List(std::string_view target) {
    ListQuery query;
    std::string error;
    if (!ParseListQuery(target, &query, &error)) return Error(http::status::bad_request, error);
    RecordStore::Page page = store_.List(query.statuses, static_cast<int>(query.limit), query.cursor);
    std::string body = "{\"builds\":[";
    for (size_t i = 0; i < page.docs.size(); ++i) {
      if (i) body += ',';
      // Live builds are answered from memory: the stored document lags their progress.
      json doc = json::parse(page.docs[i], nullptr, false);
      if (doc.is_object() && doc.contains("status") && !IsFinalName(doc["status"])) {
        GetResult live = manager_.Get(doc["id"].get<std::string>());
        body += live.outcome == GetOutcome::kFound ? live.record : page.docs[i];
      } else {
        body += page.docs[i];
      }
    }
    body += "],\"next_cursor\":";
    body += page.next_cursor ? json(std::to_string(*page.next_cursor)).dump() : "null";
    body += '}';
    return JsonResponse(http::status::ok, std::move(body));
  }

  static bool IsFinalName(const json& status) {
    BuildState state;
    return status.is_string() && ParseBuildState(status.get<std::string>(), &state) && IsFinal(state);
  }

  // GET /builds/{id}/trace: the stored events as a Chrome trace (the same document as
  // `trtwatch build --trace`); a live build's open phases end at its latest event.
  Response Trace(const std::string& id) {
    GetResult record = manager_.Get(id);
    if (record.outcome != GetOutcome::kFound) return ApiResponse(std::move(record));
    TraceBuilder trace;
    const bool read = store_.ForEachEvent(id, 0, [&trace](const StoredEvent& stored) {
      Event event;
      std::string ignored;  // the log holds only lines the service validated
      if (EventFromJson(stored.json, &event, &ignored)) trace.Apply(event);
    });
    if (!read) {
      return Error(http::status::internal_server_error,
                   "the event log of \"" + id + "\" could not be read: " + store_.last_error());
    }
    Response res = JsonResponse(http::status::ok, trace.Json());
    res.set(http::field::content_disposition, "attachment; filename=\"" + id + ".trace.json\"");
    return res;
  }

  awaitable<void> Events(beast::tcp_stream& stream, const Request& req, std::string id) {
    if (!ValidBuildId(id)) {
      co_await Send(stream, Error(http::status::not_found, "no build \"" + id + "\"; list builds with GET /builds"),
                    false);
      co_return;
    }
    // ?cancel_on_disconnect=true: this stream owns the build; if it goes away before
    // the build ends (a CI job killed, a laptop closed), the build is cancelled.
    bool cancel_on_disconnect = false;
    {
      std::vector<std::pair<std::string, std::string>> query;
      std::string bad;
      const std::string_view target(req.target().data(), req.target().size());
      if (!ParseQuery(target, &query, &bad)) {
        co_await Send(stream, Error(http::status::bad_request, bad), false);
        co_return;
      }
      for (const auto& [key, value] : query) {
        if (key != "cancel_on_disconnect") continue;  // other parameters are ignored, as always
        if (value != "true" && value != "false") {
          co_await Send(stream, Error(http::status::bad_request, "cancel_on_disconnect must be true or false"), false);
          co_return;
        }
        cancel_on_disconnect = value == "true";
      }
    }
    uint64_t last = 0;
    auto header = req.find("Last-Event-ID");
    if (header != req.end() &&
        !ParseLastEventId(std::string_view(header->value().data(), header->value().size()), &last)) {
      co_await Send(stream, Error(http::status::bad_request,
                                  "Last-Event-ID must be the decimal id of an event this stream sent"),
                    false);
      co_return;
    }
    if (sse_clients_ >= max_sse_clients_) {
      co_await Send(stream, RetryLater(http::status::too_many_requests, "open event streams", max_sse_clients_,
                                       "--max-sse-clients"),
                    false);
      co_return;
    }
    auto sub = std::make_unique<SseStream>(stream.get_executor(), metrics_, last);
    const BuildManager::Subscription s = manager_.Subscribe(id, sub.get());
    if (!s.found) {
      co_await Send(stream, Error(http::status::not_found, "no build \"" + id + "\"; list builds with GET /builds"),
                    false);
      co_return;
    }
    // Replay the log up to where the live feed starts, one bounded page at a time; the
    // first page is read before answering so that an unreadable log is a 500.
    std::vector<SseItem> page;
    uint64_t replayed = last;
    std::string error;
    if (replayed < s.last_seq && !manager_.ReplayPage(id, replayed, s.last_seq, &page, &replayed, &error)) {
      if (s.live) manager_.Unsubscribe(id, sub.get());
      co_await Send(stream, Error(http::status::internal_server_error, error), false);
      co_return;
    }
    if (!s.live && replayed >= s.last_seq && page.empty()) {
      // The build is over and the client has every event: 204 stops EventSource reconnecting.
      Response res{http::status::no_content, 11};
      co_await Send(stream, std::move(res), false);
      co_return;
    }
    ++sse_clients_;
    metrics_.SseClientOpened();
    boost::system::error_code ec;
    // A small kernel send buffer: backlog then builds up in the stream's own bounded,
    // coalescing queue, not as megabytes of stale steps per client in the kernel.
    stream.socket().set_option(asio::socket_base::send_buffer_size(kSseSendBuffer), ec);
    ec.clear();
    // Each event is serialised once (the shared frame); a batch copies frames into one
    // buffer so that a write is one syscall (a gather write would take the ~150-byte
    // frames 64 at a time).
    std::string batch = SseHead();
    metrics_.Request(200);
    size_t next = 0;  // in `page`
    while (!ec) {
      // Replay first, then live: both are in seq order and never overlap (live events
      // start after s.last_seq, the replay ends there).
      while (batch.size() < kWriteBatch) {
        if (next == page.size()) {
          if (replayed >= s.last_seq) break;
          next = 0;
          if (!manager_.ReplayPage(id, replayed, s.last_seq, &page, &replayed, &error)) {
            ec = asio::error::broken_pipe;  // cannot go on without a gap: end; the client resumes
            break;
          }
          if (page.empty()) break;
        }
        batch += *page[next++].frame;
      }
      if (ec) break;
      const bool replay_done = next == page.size() && replayed >= s.last_seq;
      if (replay_done) {
        if (page.size() > 0) {
          page.clear();
          page.shrink_to_fit();
          next = 0;
        }
        if (sub->overflow_) {
          metrics_.SseClientCutOff();
          break;
        }
        sub->TakeQueued(&batch);
      }
      if (!batch.empty()) {
        co_await WriteBatch(stream, &batch, &ec);
        continue;
      }
      if (!replay_done) continue;
      if (sub->ended_ || !s.live) break;
      co_await WaitForMore(stream, *sub, &batch);
    }
    if (s.live) manager_.Unsubscribe(id, sub.get());
    // A write failed (the client is gone: a closed socket is noticed at the next event
    // or heartbeat) while the build still runs and the service is not stopping.
    if (cancel_on_disconnect && ec && s.live && !sub->ended_ && !stopping_) {
      manager_.CancelFor(id, "api", "the client following the build with cancel_on_disconnect went away");
    }
    --sse_clients_;
    metrics_.SseClientClosed();
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  // Writes `batch` (then clears it); a client that takes no bytes for kWriteTimeout is
  // cut off.
  awaitable<void> WriteBatch(beast::tcp_stream& stream, std::string* batch, boost::system::error_code* ec) {
    stream.expires_after(kWriteTimeout);
    co_await asio::async_write(stream, asio::buffer(*batch), asio::redirect_error(use_awaitable, *ec));
    if (*ec == beast::error::timeout) metrics_.SseClientCutOff();
    batch->clear();
  }

  // Waits for `sub` to be woken (new frames, its end, shutdown); after kHeartbeat of
  // nothing, `batch` becomes a heartbeat.
  awaitable<void> WaitForMore(beast::tcp_stream& stream, SseStream& sub, std::string* batch) {
    stream.expires_never();
    boost::system::error_code wait_ec;
    sub.wake_.expires_after(kHeartbeat);
    co_await sub.wake_.async_wait(asio::redirect_error(use_awaitable, wait_ec));
    if (!wait_ec) *batch = kSseHeartbeat;
  }

  // GET /builds/changes: every record written from now on, as "record" events (the
  // dashboard's list stays current without polling). No replay: a client reads
  // GET /builds first, then applies the changes; a reconnect does the same.
  awaitable<void> RecordChanges(beast::tcp_stream& stream) {
    if (sse_clients_ >= max_sse_clients_) {
      co_await Send(stream, RetryLater(http::status::too_many_requests, "open event streams", max_sse_clients_,
                                       "--max-sse-clients"),
                    false);
      co_return;
    }
    auto sub = std::make_unique<SseStream>(stream.get_executor(), metrics_, 0);
    manager_.WatchRecords(sub.get());
    record_streams_.insert(sub.get());
    ++sse_clients_;
    metrics_.SseClientOpened();
    metrics_.Request(200);
    boost::system::error_code ec;
    std::string batch = SseHead();
    while (!ec && !stopping_) {
      if (sub->overflow_) {  // too slow to keep up: it reconnects and reads the list again
        metrics_.SseClientCutOff();
        break;
      }
      sub->TakeQueued(&batch);
      if (!batch.empty()) {
        co_await WriteBatch(stream, &batch, &ec);
        continue;
      }
      co_await WaitForMore(stream, *sub, &batch);
    }
    manager_.UnwatchRecords(sub.get());
    record_streams_.erase(sub.get());
    --sse_clients_;
    metrics_.SseClientClosed();
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  asio::io_context& io_;
  const ServerOptions& options_;
  BuildManager& manager_;
  RecordStore& store_;
  Metrics& metrics_;
  const std::string token_;
  const int64_t max_connections_;
  const int64_t max_sse_clients_;
  int64_t connections_ = 0;
  int64_t sse_clients_ = 0;
  bool stopping_ = false;
  std::set<SseStream*> record_streams_;  // GET /builds/changes clients, woken to end on shutdown
  UiSessions ui_sessions_{kUiSessionSeconds, kUiSessionLimit};
  mcp::HttpEndpoint& mcp_;
};

bool ParseListen(const std::string& listen, asio::ip::address* address, unsigned short* port, std::string* error) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    *error = "--listen must be HOST:PORT, e.g. 127.0.0.1:8470 (got \"" + listen + "\")";
    return false;
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  boost::system::error_code ec;
  *address = asio::ip::make_address(host, ec);
  int64_t p = -1;
  if (ec || !ParseInt(std::string_view(listen).substr(colon + 1), &p) || p < 0 || p > 65535) {
    *error = "--listen must be HOST:PORT with a numeric address and a port 0-65535, e.g. 127.0.0.1:8470 (got \"" +
             listen + "\")";
    return false;
  }
  *port = static_cast<unsigned short>(p);
  return true;
}

struct ConnectionLimits {
  int64_t connections;
  int64_t sse_clients;
};

// Raises the descriptor limit to its hard maximum and caps connections below it,
// keeping a reserve for the builds' pipes, the store and the accept back-off.
ConnectionLimits ConnectionLimitsFor(const ServerOptions& options) {
  const int64_t available = RaiseOpenFileLimit();
  const int64_t reserve = 64 + 8 * static_cast<int64_t>(options.max_concurrent);
  const int64_t fit = std::max<int64_t>(16, available - reserve);
  ConnectionLimits l;
  l.connections = options.max_connections > 0 ? std::min<int64_t>(options.max_connections, fit) : fit;
  l.sse_clients = options.max_sse_clients > 0 ? std::min<int64_t>(options.max_sse_clients, l.connections)
                                              : l.connections;
  return l;
}

}  // namespace

bool ReadTokenFile(const std::string& path, std::string* token, std::string* error) {
  namespace fs = std::filesystem;
  constexpr uintmax_t kMaxTokenFile = 4096;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    *error = "cannot read --token-file \"" + path + "\": " + (ec ? ec.message() : "no such file");
    return false;
  }
  if (!fs::is_regular_file(st)) {
    *error = "--token-file \"" + path + "\" is not a regular file; put the token in a file of its own";
    return false;
  }
  if ((st.permissions() & (fs::perms::group_all | fs::perms::others_all)) != fs::perms::none) {
    *error = "--token-file \"" + path + "\" is accessible by other users; run: chmod 600 " + path;
    return false;
  }
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > kMaxTokenFile) {
    *error = "--token-file \"" + path + "\" is larger than 4096 bytes; it must hold the token only";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read --token-file \"" + path + "\"";
    return false;
  }
  std::string text(kMaxTokenFile + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  for (char c : text) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      *error = "--token-file \"" + path + "\" must hold one line: the token, without spaces or control characters";
      return false;
    }
  }
  if (text.size() < 16) {
    *error = "the token in --token-file must be at least 16 characters (try: openssl rand -hex 32 > FILE)";
    return false;
  }
  *token = std::move(text);
  return true;
}

int RunServer(const ServerOptions& options) {
  asio::ip::address address;
  unsigned short port = 0;
  std::string error;
  if (!ParseListen(options.listen, &address, &port, &error)) return Usage(error);
  std::string token;
  if (!options.token_file.empty() && !ReadTokenFile(options.token_file, &token, &error)) return Usage(error);
  if (!address.is_loopback() && token.empty()) {
    return Usage("listening on " + options.listen +
                 " (not loopback) needs a bearer token: add --token-file FILE, or listen on 127.0.0.1");
  }
  if (options.max_concurrent < 1) return Usage("--max-concurrent must be at least 1");
  if (options.queue_limit < 0) return Usage("--queue-limit must be 0 or more");
  if (options.max_connections < 0 || options.max_sse_clients < 0) {
    return Usage("--max-connections and --max-sse-clients must be 0 (automatic) or more");
  }
  if (!(options.cancel_grace_seconds >= 0 && options.cancel_grace_seconds <= kMaxCancelGraceSeconds)) {
    return Usage("--cancel-grace must be from 0 to 1h");
  }
  std::vector<std::string> roots;
  if (!CanonicalRoots(options.model_roots, &roots, &error)) return Usage(error);
  std::unique_ptr<RecordStore> store = RecordStore::Open(options.data_dir, &error);
  if (!store) return Usage(error);
  std::vector<std::string> roots_of_data;  // the data dir, canonical
  if (!CanonicalRoots({options.data_dir}, &roots_of_data, &error)) return Usage(error);

  IgnoreBrokenPipe();
  asio::io_context io(1);
  tcp::acceptor acceptor(io);
  boost::system::error_code ec;
  const tcp::endpoint endpoint(address, port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Usage("cannot listen on " + options.listen + ": " + ec.message() + " (pick another --listen port)");

  Metrics metrics;
  ManagerOptions manager_options;
  manager_options.data_dir = roots_of_data.front();
  manager_options.model_roots = roots;
  manager_options.max_concurrent = options.max_concurrent;
  manager_options.queue_limit = options.queue_limit;
  manager_options.cancel_grace_seconds = options.cancel_grace_seconds;
  auto manager = std::make_unique<BuildManager>(io, *store, metrics, manager_options);
  manager->Recover();
  // Retention: at start, then every kRetentionPeriod (a build is pruned at most that
  // long after it is due).
  asio::steady_timer retention_timer(io);
  std::function<void()> prune = [&] {
    const PruneReport pruned =
        PruneFinishedBuilds(*store, options.retention, NowUnix(), manager_options.data_dir + "/engines");
    if (!pruned.error.empty()) std::fprintf(stderr, "trtwatch serve: could not prune old builds: %s\n", pruned.error.c_str());
    if (pruned.removed > 0) std::fprintf(stderr, "trtwatch serve: pruned %zu finished builds (retention)\n", pruned.removed);
    retention_timer.expires_after(kRetentionPeriod);
    retention_timer.async_wait([&](const boost::system::error_code& e) {
      if (!e) prune();
    });
  };
  if (options.retention.enabled()) prune();
  const ConnectionLimits limits = ConnectionLimitsFor(options);
  mcp::ManagerBuilds mcp_builds(*manager, *store);
  mcp::ToolOptions mcp_options;
  mcp_options.max_build_seconds = options.mcp_max_build_seconds;
  if (options.doctor_json) mcp_options.doctor = [&options] { return json::parse(options.doctor_json()); };
  mcp::Tools mcp_tools(io, mcp_builds, mcp_options);
  mcp::HttpEndpoint mcp_endpoint(mcp_tools, mcp::ServerInfo{options.version, mcp::Instructions()});
  Server server(io, options, *manager, *store, metrics, token, limits.connections, limits.sse_clients, mcp_endpoint);

  const tcp::endpoint bound = acceptor.local_endpoint();
  const std::string host = bound.address().is_v6() ? "[" + bound.address().to_string() + "]"
                                                   : bound.address().to_string();
  std::fprintf(stderr, "trtwatch serve: listening on http://%s:%u (data in %s)\n", host.c_str(), bound.port(),
               options.data_dir.c_str());

  asio::co_spawn(io, server.Accept(acceptor), asio::detached);

  // First SIGTERM/SIGINT: stop accepting, cancel (or finish) running builds, let the
  // streams deliver their last events, stop. A second one kills the workers at once.
  asio::signal_set signals(io, SIGTERM, SIGINT);
  int signals_seen = 0;
  asio::steady_timer drain(io);
  std::function<void(int)> drain_streams = [&](int tries_left) {
    if (server.sse_clients() == 0 || tries_left == 0) {
      io.stop();
      return;
    }
    drain.expires_after(50ms);
    drain.async_wait([&, tries_left](const boost::system::error_code&) { drain_streams(tries_left - 1); });
  };
  std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& e,
                                                                            int) {
    if (e) return;
    if (++signals_seen == 1) {
      std::fprintf(stderr, "trtwatch serve: stopping (%s running builds); signal again to kill them\n",
                   options.finish_on_shutdown ? "finishing" : "cancelling");
      boost::system::error_code ignored;
      acceptor.close(ignored);
      server.set_stopping();
      manager->Shutdown(!options.finish_on_shutdown, [&] { drain_streams(60); });
    } else {
      manager->KillAll();
    }
    signals.async_wait(on_signal);
  };
  signals.async_wait(on_signal);

  io.run();
  mcp_tools.Stop();  // its watches unsubscribe from the manager
  manager.reset();  // workers and their pipes go before the event loop does
  std::fprintf(stderr, "trtwatch serve: stopped\n");
  return 0;
}

}  // namespace trtwatch::service
