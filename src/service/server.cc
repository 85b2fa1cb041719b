#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "service/server.h"

#include <signal.h>

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
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mcp/http_beast.h"
#include "mcp/manager_builds.h"
#include "mcp/tools.h"
#include "service/assets.h"
#include "service/build_manager.h"
#include "service/metrics.h"
#include "service/model_paths.h"
#include "service/record_store.h"
#include "service/sse.h"

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
constexpr int kRetryMs = 2000;
constexpr size_t kSseCoalesceAt = 256;  // queued events before steps coalesce
constexpr size_t kSseLimit = 4096;      // queued events before a slow client is cut off
constexpr size_t kWriteBatch = 64 * 1024;
constexpr int kSseSendBuffer = 64 * 1024;

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
  return JsonResponse(status, json{{"error", message}}.dump());
}

bool ValidBuildId(std::string_view id) {
  if (id.size() != 34 || id.substr(0, 2) != "b_") return false;
  for (char c : id.substr(2)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// One SSE client's side of the fan-out: a bounded queue and a timer used as a wake-up.
class SseStream final : public EventSubscriber {
 public:
  SseStream(const asio::any_io_executor& executor, Metrics& metrics)
      : wake_(executor), queue_(kSseCoalesceAt, kSseLimit), metrics_(metrics) {}

  void OnEvent(const SseItem& item) override {
    if (overflow_) return;
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

  asio::steady_timer wake_;
  SseQueue queue_;
  bool ended_ = false;
  bool overflow_ = false;

 private:
  Metrics& metrics_;
};

class Server {
 public:
  Server(asio::io_context& io, const ServerOptions& options, BuildManager& manager, RecordStore& store,
         Metrics& metrics, std::string token, mcp::HttpEndpoint& mcp)
      : io_(io), options_(options), manager_(manager), store_(store), metrics_(metrics), token_(std::move(token)),
        mcp_(mcp) {}

  awaitable<void> Accept(tcp::acceptor& acceptor) {
    while (true) {
      boost::system::error_code ec;
      tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(use_awaitable, ec));
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      if (ec) {
        // Out of descriptors, usually: wait a little rather than spin.
        asio::steady_timer pause(io_, 50ms);
        co_await pause.async_wait(asio::redirect_error(use_awaitable, ec));
        continue;
      }
      asio::co_spawn(io_, Session(std::move(socket)), asio::detached);
    }
  }

  int64_t sse_clients() const { return sse_clients_; }
  void set_stopping() { stopping_ = true; }

 private:
  awaitable<void> Session(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    boost::system::error_code ec;
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
      const std::string_view target(req.target().data(), req.target().size());
      const std::string_view path = target.substr(0, target.find('?'));
      if (!Authorized(req, path)) {
        Response res = Error(http::status::unauthorized,
                             "missing or wrong bearer token; send \"Authorization: Bearer TOKEN\" with the token "
                             "from the server's --token-file");
        res.set(http::field::www_authenticate, "Bearer");
        if (!co_await Send(stream, std::move(res), req.keep_alive())) break;
        continue;
      }
      if (path == "/mcp") {  // MCP over Streamable HTTP (src/mcp/http_endpoint.cc)
        if (!co_await mcp::ServeHttp(stream, req, mcp_)) break;
        continue;
      }
      const std::vector<std::string_view> parts = Split(path, '/');
      if (parts.size() == 4 && parts[1] == "builds" && parts[3] == "events" && req.method() == http::verb::get) {
        co_await Events(stream, req, std::string(parts[2]));
        break;
      }
      Response res = Handle(req, path, target, parts);
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

  bool Authorized(const Request& req, std::string_view path) const {
    if (token_.empty() || path == "/healthz") return true;
    auto it = req.find(http::field::authorization);
    if (it == req.end()) return false;
    const std::string_view value(it->value().data(), it->value().size());
    constexpr std::string_view kBearer = "Bearer ";
    if (value.size() <= kBearer.size() || value.substr(0, kBearer.size()) != kBearer) return false;
    return TokenMatches(std::string(value.substr(kBearer.size())), token_);
  }

  static Response MethodNotAllowed(std::string_view allow) {
    Response res = Error(http::status::method_not_allowed,
                         "method not allowed here; use " + std::string(allow));
    res.set(http::field::allow, std::string(allow));
    return res;
  }

  Response Handle(const Request& req, std::string_view path, std::string_view target,
                  const std::vector<std::string_view>& parts) {
    const http::verb method = req.method();
    if (path == "/healthz") {
      if (method != http::verb::get) return MethodNotAllowed("GET");
      return JsonResponse(http::status::ok, json{{"status", stopping_ ? "stopping" : "ok"},
                                                 {"running", manager_.running()},
                                                 {"queued", manager_.queued()}}
                                                .dump());
    }
    if (path == "/metrics") {
      if (method != http::verb::get) return MethodNotAllowed("GET");
      Response res{http::status::ok, 11};
      res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      res.body() = metrics_.Render(manager_.running(), manager_.queued());
      return res;
    }
    if (path == "/openapi.json") {
      if (method != http::verb::get) return MethodNotAllowed("GET");
      return JsonResponse(http::status::ok, std::string(OpenApiDocument()));
    }
    if (path == "/" || path == "/index.html") {
      if (method != http::verb::get) return MethodNotAllowed("GET");
      Response res{http::status::ok, 11};
      res.set(http::field::content_type, "text/html; charset=utf-8");
      res.body() = std::string(DashboardPage());
      return res;
    }
    if (parts.size() == 2 && parts[1] == "builds") {
      if (method == http::verb::post) {
        ApiResult r = manager_.Submit(req.body());
        Response res = JsonResponse(static_cast<http::status>(r.status), std::move(r.body));
        if (r.status == 201) res.set(http::field::location, "/builds/" + r.id);
        return res;
      }
      if (method == http::verb::get) return List(target);
      return MethodNotAllowed("GET, POST");
    }
    if (parts.size() >= 3 && parts.size() <= 4 && parts[1] == "builds") {
      const std::string id(parts[2]);
      const bool cancel = parts.size() == 4 && parts[3] == "cancel";
      const bool events = parts.size() == 4 && parts[3] == "events";
      if (parts.size() == 4 && !cancel && !events) return NotFound(path);
      if (!ValidBuildId(id)) {
        return Error(http::status::not_found, "no build \"" + id + "\"; build ids look like b_ and 32 hex digits");
      }
      if (events) return MethodNotAllowed("GET");
      if (cancel) {
        if (method != http::verb::post) return MethodNotAllowed("POST");
        ApiResult r = manager_.Cancel(id);
        return JsonResponse(static_cast<http::status>(r.status), std::move(r.body));
      }
      if (method != http::verb::get) return MethodNotAllowed("GET");
      ApiResult r = manager_.Get(id);
      return JsonResponse(static_cast<http::status>(r.status), std::move(r.body));
    }
    return NotFound(path);
  }

  static Response NotFound(std::string_view path) {
    return Error(http::status::not_found, "no such endpoint \"" + std::string(path) +
                                              "\"; see GET /openapi.json for the API");
  }

  Response List(std::string_view target) {
    std::vector<std::string> statuses;
    int64_t limit = 20;
    int64_t cursor = 0;
    const size_t q = target.find('?');
    if (q != std::string_view::npos) {
      for (std::string_view pair : Split(target.substr(q + 1), '&')) {
        if (pair.empty()) continue;
        const size_t eq = pair.find('=');
        const std::string_view key = pair.substr(0, eq);
        const std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
        if (key == "status") {
          for (std::string_view s : Split(value, ',')) {
            BuildState state;
            if (!ParseBuildState(s, &state)) {
              return Error(http::status::bad_request,
                           "unknown status \"" + std::string(s) +
                               "\"; use queued, running, cancelling, succeeded, failed, cancelled, timed_out or "
                               "interrupted (comma-separated)");
            }
            statuses.emplace_back(s);
          }
        } else if (key == "limit") {
          if (!ParseInt(value, &limit) || limit < 1 || limit > 200) {
            return Error(http::status::bad_request, "limit must be an integer from 1 to 200");
          }
        } else if (key == "cursor") {
          if (!ParseInt(value, &cursor) || cursor < 1) {
            return Error(http::status::bad_request, "cursor must be the next_cursor of a previous page");
          }
        } else {
          return Error(http::status::bad_request,
                       "unknown query parameter \"" + std::string(key) + "\"; use status, limit or cursor");
        }
      }
    }
    RecordStore::Page page = store_.List(statuses, static_cast<int>(limit), cursor);
    std::string body = "{\"builds\":[";
    for (size_t i = 0; i < page.docs.size(); ++i) {
      if (i) body += ',';
      // Live builds are answered from memory: the stored document lags their progress.
      json doc = json::parse(page.docs[i], nullptr, false);
      if (doc.is_object() && doc.contains("status") && !IsFinalName(doc["status"])) {
        ApiResult live = manager_.Get(doc["id"].get<std::string>());
        body += live.status == 200 ? live.body : page.docs[i];
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

  awaitable<void> Events(beast::tcp_stream& stream, const Request& req, std::string id) {
    if (!ValidBuildId(id)) {
      co_await Send(stream, Error(http::status::not_found, "no build \"" + id + "\"; list builds with GET /builds"),
                    false);
      co_return;
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
    auto sub = std::make_unique<SseStream>(stream.get_executor(), metrics_);
    BuildManager::Subscription s = manager_.Subscribe(id, last, sub.get());
    if (!s.found) {
      co_await Send(stream, Error(http::status::not_found, "no build \"" + id + "\"; list builds with GET /builds"),
                    false);
      co_return;
    }
    if (!s.live && s.replay.empty()) {
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
    std::string batch =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\n"
        "Connection: close\r\nX-Accel-Buffering: no\r\nServer: trtwatch\r\n\r\n" +
        SseRetry(kRetryMs);
    metrics_.Request(200);
    size_t next = 0;
    while (!ec) {
      // Replay first, then live: both are in seq order and never overlap (the replay
      // was read in the same turn of the loop that subscribed).
      while (next < s.replay.size() && batch.size() < kWriteBatch) batch += *s.replay[next++].frame;
      if (next == s.replay.size()) {
        if (sub->overflow_) {
          metrics_.SseClientCutOff();
          break;
        }
        while (batch.size() < kWriteBatch) {
          std::optional<SseItem> item = sub->queue_.Pop();
          if (!item) break;
          batch += *item->frame;
        }
      }
      if (!batch.empty()) {
        stream.expires_after(kWriteTimeout);
        co_await asio::async_write(stream, asio::buffer(batch), asio::redirect_error(use_awaitable, ec));
        batch.clear();
        continue;
      }
      if (sub->ended_ || !s.live) break;
      stream.expires_never();
      boost::system::error_code wait_ec;
      sub->wake_.expires_after(kHeartbeat);
      co_await sub->wake_.async_wait(asio::redirect_error(use_awaitable, wait_ec));
      if (!wait_ec) batch = kSseHeartbeat;
    }
    manager_.Unsubscribe(id, sub.get());
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
  int64_t sse_clients_ = 0;
  bool stopping_ = false;
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

}  // namespace

bool TokenMatches(const std::string& presented, const std::string& expected) {
  // Every byte is compared whatever the first difference; the length only decides
  // the result, not how long the comparison takes over the expected token.
  unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char p = i < presented.size() ? static_cast<unsigned char>(presented[i]) : 0;
    diff |= static_cast<unsigned char>(p ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0;
}

int RunServer(const ServerOptions& options) {
  asio::ip::address address;
  unsigned short port = 0;
  std::string error;
  if (!ParseListen(options.listen, &address, &port, &error)) return Usage(error);
  std::string token;
  if (!options.token_file.empty()) {
    std::ifstream in(options.token_file);
    if (!in) return Usage("cannot read --token-file \"" + options.token_file + "\"");
    std::stringstream text;
    text << in.rdbuf();
    token = text.str();
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
    if (token.size() < 16) {
      return Usage("the token in --token-file must be at least 16 characters (try: openssl rand -hex 32 > FILE)");
    }
  }
  if (!address.is_loopback() && token.empty()) {
    return Usage("listening on " + options.listen +
                 " (not loopback) needs a bearer token: add --token-file FILE, or listen on 127.0.0.1");
  }
  if (options.max_concurrent < 1) return Usage("--max-concurrent must be at least 1");
  if (options.queue_limit < 0) return Usage("--queue-limit must be 0 or more");
  std::vector<std::string> roots;
  if (!CanonicalRoots(options.model_roots, &roots, &error)) return Usage(error);
  std::unique_ptr<RecordStore> store = RecordStore::Open(options.data_dir, &error);
  if (!store) return Usage(error);

  signal(SIGPIPE, SIG_IGN);
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
  manager_options.data_dir = options.data_dir;
  manager_options.model_roots = roots;
  manager_options.max_concurrent = options.max_concurrent;
  manager_options.queue_limit = options.queue_limit;
  manager_options.cancel_grace_seconds = options.cancel_grace_seconds;
  auto manager = std::make_unique<BuildManager>(io, *store, metrics, manager_options);
  manager->Recover();
  mcp::ManagerBuilds mcp_builds(*manager, *store);
  mcp::ToolOptions mcp_options;
  mcp_options.max_build_seconds = options.mcp_max_build_seconds;
  if (options.doctor_json) mcp_options.doctor = [&options] { return json::parse(options.doctor_json()); };
  mcp::Tools mcp_tools(io, mcp_builds, mcp_options);
  mcp::HttpEndpoint mcp_endpoint(mcp_tools, mcp::ServerInfo{options.version, mcp::Instructions()});
  Server server(io, options, *manager, *store, metrics, token, mcp_endpoint);

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
