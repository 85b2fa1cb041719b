#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "service/http_api.h"


#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <vector>
#include <memory>
#include <nlohmann/json.hpp>

#include "service/assets.h"
#include "sinks/trace_sink.h"
#include "builds/artifacts/artifact_store.h"
#include "builds/build_groups.h"
#include "builds/build_manager.h"
#include "builds/history_queries.h"
#include "service/hosted_endpoint.h"
#include "service/http_request.h"
#include "builds/metrics.h"
#include "builds/stores/record_store.h"
#include "service/sse.h"
#include "service/sse_hubs.h"
#include "service/ui_routes.h"
#include "service/ui_session.h"
#include "platform/file_sender.h"
#include "protocol/utf8.h"
#include "history/history_file.h"

namespace trtwatch::service {

// The builds layer's names this file uses.
using builds::BuildGroups;
using builds::BuildState;
using builds::CancelOutcome;
using builds::GetOutcome;
using builds::GetResult;
using builds::GroupOutcome;
using builds::GroupResult;
using builds::IsFinal;
using builds::ManagerResult;
using builds::NowUnix;
using builds::ParseBuildState;
using builds::StoredEvent;
using builds::SubmitOutcome;
using builds::SubmitResult;

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
constexpr auto kLingerTime = 2s;     // after a refusal, how long the rest of a request is read and dropped
constexpr size_t kLingerBytes = 1024 * 1024;  // and how much of it
constexpr double kUiSessionSeconds = 12 * 3600;  // a browser sign-in lasts a working day
constexpr size_t kUiSessionLimit = 256;
constexpr size_t kUploadChunk = 256 * 1024;     // an upload's bytes in memory at a time
constexpr size_t kSendFileMax = 8u << 20;  // bytes one sendfile call may send (the socket takes less)

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
    case CancelOutcome::kUnavailable:
      return {http::status::service_unavailable, 5};
  }
  return {http::status::internal_server_error};
}

HttpOutcome ToHttp(GroupOutcome outcome) {
  switch (outcome) {
    case GroupOutcome::kCreated:
      return {http::status::created};
    case GroupOutcome::kFound:
      return {http::status::ok};
    case GroupOutcome::kCancelling:
      return {http::status::accepted};
    case GroupOutcome::kInvalid:
      return {http::status::bad_request};
    case GroupOutcome::kNotFound:
      return {http::status::not_found};
    case GroupOutcome::kNotYet:
      return {http::status::conflict};
    case GroupOutcome::kQueueFull:
      return {http::status::too_many_requests, 10};
    case GroupOutcome::kShuttingDown:
    case GroupOutcome::kStorageFailed:
    case GroupOutcome::kUnavailable:
      return {http::status::service_unavailable, 5};
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

}  // namespace

class HttpApi::Impl {
 public:
  Impl(asio::io_context& io, const ServerOptions& options, BuildManager& manager, RecordStore& store,
       ArtifactStore& artifacts, Metrics& metrics, SseHubs& hubs, std::string token, ConnectionCaps caps,
       HostedEndpoint& mcp)
      : io_(io),
        options_(options),
        manager_(manager),
        store_(store),
        artifacts_(artifacts),
        metrics_(metrics),
        hubs_(hubs),
        token_(std::move(token)),
        max_connections_(caps.connections),
        max_sse_clients_(caps.sse_clients),
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

  void set_stopping() {
    stopping_ = true;
    hubs_.SetStopping();
  }

 private:
  awaitable<void> Session(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    // Bounded: the unparsed bytes of a request (its head, a chunk-size line, the
    // trailers) never take more than this, whatever the client sends.
    beast::flat_buffer buffer(kReadBufferLimit);
    boost::system::error_code ec;
    ++connections_;
    struct Count {
      int64_t& n;
      ~Count() { --n; }
    } count{connections_};
    // Over the cap (event streams handed to the hubs count too): answer the first
    // request with 503 and close, so that descriptors stay for the builds' pipes and
    // the store.
    const bool over_cap = connections_ + hubs_.clients() > max_connections_;
    bool linger = false;  // closing after a refusal: the client may still be sending its request
    while (true) {
      linger = false;
      http::request_parser<http::string_body> parser;
      parser.header_limit(kHeaderLimit);
      // The largest body any route takes, so that the head is read whatever its
      // Content-Length; each route's own limit is checked with the head.
      parser.body_limit(std::max<uint64_t>(options_.body_limit, options_.max_upload_size));
      auto chunk_extension_limit = [](uint64_t, beast::string_view extensions, boost::system::error_code& e) {
        if (extensions.size() > kChunkExtensionLimit) e = http::error::bad_chunk_extension;
      };
      parser.on_chunk_header(chunk_extension_limit);
      stream.expires_after(kIdleTimeout);
      co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
      if (ClientWentAway(ec)) break;
      linger = true;  // from here on every break follows a refusal
      if (ec) {
        co_await Send(stream, HeadReadError(ec, parser.get().target()), false);
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
      const RequestHead head = HeadOf(req);
      if (HeadRefusal r = CheckHead(head)) {  // the framing may be in doubt: closed in any case
        co_await Send(stream, Error(static_cast<http::status>(r.status), r.message), false);
        break;
      }
      const bool has_body = !parser.is_done();
      if (std::optional<Response> refused = RefusedBeforeBody(req, has_body, parser.content_length().value_or(0))) {
        // A body not read cannot be skipped reliably: the connection closes.
        if (!co_await Send(stream, std::move(*refused), req.keep_alive() && !has_body)) break;
        continue;
      }
      if (IsUpload(req)) {  // the body streams to a file, never into memory
        if (!co_await ReceiveUpload(stream, buffer, parser, head)) break;
        linger = false;
        continue;
      }
      parser.body_limit(options_.body_limit);  // a chunked body is cut off there
      if (has_body) {
        if (ExpectsContinue(head)) co_await SendContinue(stream);
        co_await http::async_read(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
        if (ClientWentAway(ec)) break;
        if (ec) {
          co_await Send(stream, BodyReadError(ec, options_.body_limit), false);
          break;
        }
      }
      linger = false;
      if (!co_await Dispatch(stream, req)) break;
    }
    co_await Close(stream, linger);
  }

  static bool ClientWentAway(const boost::system::error_code& ec) {
    return ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::eof ||
           ec == asio::error::connection_reset || ec == asio::error::operation_aborted;
  }

  Response HeadReadError(const boost::system::error_code& ec, beast::string_view parsed_target) const {
    if (ec == http::error::body_limit) return TooLarge(options_.max_upload_size);  // over every route's limit
    if (ec == http::error::bad_transfer_encoding || ec == http::error::bad_content_length) {
      // The parser's own framing checks: a repeated Transfer-Encoding, one with Content-Length.
      return Error(http::status::bad_request, "the body's length cannot be determined: " + ec.message() +
                                                  " (RFC 9112 §6.1, §6.3); send one Transfer-Encoding: chunked or "
                                                  "one Content-Length");
    }
    if (ec != http::error::header_limit && ec != http::error::buffer_overflow) {
      return Error(http::status::bad_request, "malformed HTTP request: " + ec.message());
    }
    // The parser keeps only what it has not parsed: the request line, once read, is gone
    // from the buffer but its target is in the message.
    if (OversizedHeadStatus(std::string_view(parsed_target.data(), parsed_target.size())) == 414) {
      return Error(http::status::uri_too_long, "the request line is longer than " + std::to_string(kTargetLimit) +
                                                   " bytes (RFC 9112 §3); shorten the URL");
    }
    return Error(http::status::request_header_fields_too_large,
                 "the request head is larger than " + std::to_string(kHeaderLimit) +
                     " bytes (RFC 6585 §5); send fewer or shorter header fields");
  }

  Response BodyReadError(const boost::system::error_code& ec, uint64_t limit) const {
    if (ec == http::error::body_limit) return TooLarge(limit);
    if (ec == http::error::buffer_overflow || ec == http::error::bad_chunk_extension) {
      return Error(http::status::bad_request,
                   "a chunk-size line, its extensions or the trailers are too long or malformed (at most " +
                       std::to_string(kChunkExtensionLimit) + " bytes of extensions, RFC 9112 §7.1.1)");
    }
    if (ec == http::error::header_limit) {
      return Error(http::status::request_header_fields_too_large, "the trailer section is too large (RFC 6585 §5)");
    }
    return Error(http::status::bad_request, "malformed HTTP request: " + ec.message());
  }

  Response TooLarge(uint64_t limit) const {
    if (limit == options_.max_upload_size && limit != options_.body_limit) {
      return Error(http::status::payload_too_large,
                   "the upload is larger than " + std::to_string(limit) +
                       " bytes (--max-upload-size); send a smaller file or start the service with a larger "
                       "--max-upload-size");
    }
    return Error(http::status::payload_too_large, "the request body is larger than " + std::to_string(limit) +
                                                      " bytes; send a smaller request");
  }

  // Why a request is refused on its head alone, before its body is read (so that no
  // client gets to send a body it is not allowed to), or nullopt.
  std::optional<Response> RefusedBeforeBody(const Request& req, bool has_body, uint64_t content_length) {
    const std::string browser = BrowserCheck(HeaderValue(req, http::field::origin),
                                             HeaderValue(req, http::field::host), !token_.empty(), options_);
    if (!browser.empty()) return Error(http::status::forbidden, browser);
    const std::string_view target(req.target().data(), req.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    if (!IsUiPath(path) && !Authorized(req, path)) {
      Response res = Error(http::status::unauthorized,
                           "missing or wrong bearer token; send \"Authorization: Bearer TOKEN\" with the token "
                           "from the server's --token-file");
      res.set(http::field::www_authenticate, "Bearer");
      return res;
    }
    const uint64_t limit = IsUpload(req) ? options_.max_upload_size : options_.body_limit;
    if (content_length > limit) return TooLarge(limit);  // RFC 9110 §15.5.14, before the body is read
    if (std::optional<Response> bad = RefusedModelRequest(req, path)) return bad;
    if (TakesJsonBody(req.method(), path) && !AcceptableJsonType(req, has_body)) {
      Response res = Error(http::status::unsupported_media_type,
                           "send the body as JSON with \"Content-Type: application/json\"");
      res.set(http::field::accept, "application/json");  // RFC 9110 §15.5.16
      return res;
    }
    return std::nullopt;
  }

  // PUT /models/{name} and /models/{name}/{file}: bodies that stream to the artifact store.
  static bool IsUpload(const Request& req) {
    const std::string_view target(req.target().data(), req.target().size());
    const Endpoint endpoint = RouteOf(target.substr(0, target.find('?'))).endpoint;
    return req.method() == http::verb::put && (endpoint == Endpoint::kModel || endpoint == Endpoint::kModelFile);
  }

  // A model route whose names break the rule, or an upload whose digest header is
  // malformed: refused before any of the body is read.
  static std::optional<Response> RefusedModelRequest(const Request& req, std::string_view path) {
    const Route route = RouteOf(path);
    if (route.endpoint != Endpoint::kModel && route.endpoint != Endpoint::kModelFile) return std::nullopt;
    std::string why = builds::ArtifactNameError(route.id, "model name");
    if (why.empty() && route.endpoint == Endpoint::kModelFile) why = builds::ArtifactNameError(route.file, "file name");
    if (!why.empty()) return Error(http::status::bad_request, why);
    if (!IsUpload(req)) return std::nullopt;
    const ExpectedDigest digest = ExpectedDigestOf(req);
    if (!digest.error.empty()) return Error(http::status::bad_request, digest.error);
    return std::nullopt;
  }

  static ExpectedDigest ExpectedDigestOf(const Request& req) {
    auto optional_header = [&req](std::string_view name) -> std::optional<std::string_view> {
      auto it = req.find(beast::string_view(name.data(), name.size()));
      if (it == req.end()) return std::nullopt;
      return std::string_view(it->value().data(), it->value().size());
    };
    return ExpectedSha256(optional_header("Content-Digest"), optional_header("X-Content-SHA256"));
  }

  // PUT /models/{name}[/{file}]: the body, read in bounded pieces, goes to a temporary
  // file in the model's folder, renamed into place once complete and its digest checked
  // (builds/artifacts/artifact_store.h). Returns whether the connection stays open.
  awaitable<bool> ReceiveUpload(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                http::request_parser<http::string_body>& head_parser, const RequestHead& head) {
    const Request& req = head_parser.get();
    const bool keep_alive = req.keep_alive() && !stopping_;
    const std::string target(req.target().data(), req.target().size());
    const Route route = RouteOf(std::string_view(target).substr(0, target.find('?')));
    const std::string model(route.id);
    const std::string file = route.endpoint == Endpoint::kModel ? std::string(builds::kModelFileName)
                                                                : std::string(route.file);
    const ExpectedDigest expected = ExpectedDigestOf(req);
    const bool expects_continue = ExpectsContinue(head);  // `head` views the header, which moves below
    bool bad_name = false;
    std::string error;
    std::unique_ptr<builds::Upload> upload = artifacts_.BeginUpload(model, file, &bad_name, &error);
    if (!upload) {
      co_await Send(stream, Error(bad_name ? http::status::bad_request : http::status::internal_server_error,
                                  bad_name ? error : "cannot store the upload: " + error),
                    false);
      co_return false;
    }
    http::request_parser<http::buffer_body> parser(std::move(head_parser));
    parser.body_limit(options_.max_upload_size);  // a chunked body is cut off there (RFC 9110 §15.5.14)
    if (!parser.is_done() && expects_continue) co_await SendContinue(stream);
    std::vector<char> chunk(kUploadChunk);
    // Beast reads into `buffer` what its capacity allows, beyond 512 bytes only as it
    // grows: at its bounded size from the start, each read takes up to 32 KiB.
    buffer.reserve(buffer.max_size());
    boost::system::error_code ec;
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      stream.expires_after(kIdleTimeout);
      co_await http::async_read_some(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
      if (ec == http::error::need_buffer) ec = {};
      const size_t received = chunk.size() - parser.get().body().size;
      if (received > 0 && !upload->Write(std::string_view(chunk.data(), received), &error)) {
        co_await Send(stream, Error(http::status::internal_server_error, "cannot store the upload: " + error), false);
        co_return false;  // the upload's temporary file goes with it
      }
      if (ClientWentAway(ec)) co_return false;
      if (ec) {
        co_await Send(stream, BodyReadError(ec, options_.max_upload_size), false);
        co_return false;
      }
    }
    builds::StoredFile stored;
    switch (upload->Commit(expected.sha256, &stored, &error)) {
      case builds::Upload::Outcome::kDigestMismatch:
        co_return co_await Send(stream, Error(http::status::bad_request, error), keep_alive);
      case builds::Upload::Outcome::kFailed:
        co_return co_await Send(stream, Error(http::status::internal_server_error, "cannot store the upload: " + error),
                                keep_alive);
      case builds::Upload::Outcome::kStored:
        break;
    }
    Response res = ModelResponse(http::status::created, model);
    res.set(http::field::location, "/models/" + model);
    co_return co_await Send(stream, std::move(res), keep_alive);
  }

  // {name, complete, url, files: [{name, size, sha256}]}
  static json ModelJson(const builds::ModelInfo& info) {
    json files = json::array();
    for (const builds::StoredFile& f : info.files) files.push_back({{"name", f.name}, {"size", f.size}, {"sha256", f.sha256}});
    return {{"name", info.name}, {"complete", info.complete}, {"url", "/models/" + info.name}, {"files", files}};
  }

  Response ModelResponse(http::status status, const std::string& name) {
    std::string error;
    std::optional<builds::ModelInfo> info = artifacts_.Describe(name, &error);
    if (!info) return Error(http::status::not_found, "no uploaded model \"" + name + "\"; list them with GET /models");
    return JsonResponse(status, ModelJson(*info).dump());
  }

  // GET /models, GET and DELETE /models/{name} (uploads are ReceiveUpload's).
  Response HandleModels(http::verb method, const Route& route) {
    if (route.endpoint == Endpoint::kModels) {
      if (method != http::verb::get) return MethodNotAllowed("GET");
      std::string error;
      json models = json::array();
      for (const builds::ModelInfo& info : artifacts_.List(&error)) models.push_back(ModelJson(info));
      if (!error.empty()) return Error(http::status::internal_server_error, error);
      return JsonResponse(http::status::ok, json{{"models", models}}.dump());
    }
    if (route.endpoint == Endpoint::kModelFile) return MethodNotAllowed("PUT");
    const std::string name(route.id);
    if (method == http::verb::get) return ModelResponse(http::status::ok, name);
    if (method != http::verb::delete_) return MethodNotAllowed("GET, PUT, DELETE");
    std::string error;
    switch (artifacts_.Remove(name, &error)) {
      case builds::ArtifactStore::RemoveOutcome::kRemoved:
        return Response{http::status::no_content, 11};
      case builds::ArtifactStore::RemoveOutcome::kNotFound:
        return Error(http::status::not_found, "no uploaded model \"" + name + "\"; list them with GET /models");
      case builds::ArtifactStore::RemoveOutcome::kFailed:
        break;
    }
    return Error(http::status::internal_server_error, error);
  }

  // GET /builds/{id}/engine and /timing-cache: the file streamed from disk in bounded
  // pieces, with its digest as a strong ETag (RFC 9110 §8.8.3), If-None-Match (§13.1.2)
  // and one byte range (§14). Returns whether the connection stays open.
  awaitable<bool> Download(beast::tcp_stream& stream, const Request& req, const Route& route, bool head_only) {
    const bool keep_alive = req.keep_alive() && !stopping_;
    const std::string id(route.id);
    const bool engine = route.endpoint == Endpoint::kBuildEngine;
    if (!ValidBuildId(id)) {
      co_return co_await Send(stream, Error(http::status::not_found, "no build \"" + id +
                                                                         "\"; build ids look like b_ and 32 hex digits"),
                              keep_alive, head_only);
    }
    const builds::ArtifactResult a =
        manager_.Artifact(id, engine ? builds::ArtifactKind::kEngine : builds::ArtifactKind::kTimingCache);
    co_return co_await SendArtifact(stream, req, a, id + (engine ? ".engine" : ".timing-cache"), head_only);
  }

  // GET /groups/{gid}/engines/{name}: a member's engine, as its build's download.
  awaitable<bool> GroupDownload(beast::tcp_stream& stream, const Request& req, const Route& route, bool head_only) {
    const bool keep_alive = req.keep_alive() && !stopping_;
    const std::string gid(route.id);
    if (!builds::ValidGroupId(gid)) {
      co_return co_await Send(stream, Error(http::status::not_found, "no group \"" + gid +
                                                                         "\"; group ids look like g_ and 32 hex digits"),
                              keep_alive, head_only);
    }
    const std::string name(route.file);
    const builds::ArtifactResult a = manager_.groups().Engine(gid, name);
    co_return co_await SendArtifact(stream, req, a, name, head_only);
  }

  // A build's file, found or not, as a download named `file_name`.
  awaitable<bool> SendArtifact(beast::tcp_stream& stream, const Request& req, const builds::ArtifactResult& a,
                               const std::string& file_name, bool head_only) {
    const bool keep_alive = req.keep_alive() && !stopping_;
    if (a.outcome != builds::ArtifactOutcome::kFound) {
      const http::status status =
          a.outcome == builds::ArtifactOutcome::kNotYet ? http::status::conflict : http::status::not_found;
      co_return co_await Send(stream, Error(status, a.error), keep_alive, head_only);
    }
    const std::string etag = "\"" + a.file.sha256 + "\"";
    const uint64_t size = a.file.size;
    http::response<http::empty_body> res{http::status::ok, 11};
    res.set(http::field::etag, etag);
    res.set(http::field::accept_ranges, "bytes");
    res.set(http::field::cache_control, "no-cache");  // revalidated: a 304 costs no bytes
    if (const std::string_view inm = HeaderValue(req, http::field::if_none_match); !inm.empty()) {
      if (IfNoneMatchMatches(inm, etag)) {  // RFC 9110 §13.1.2: 304 for GET and HEAD
        res.result(http::status::not_modified);
        co_return co_await SendHeader(stream, std::move(res), keep_alive) && keep_alive;
      }
    }
    RangeRequest range;
    const std::string_view range_value = HeaderValue(req, http::field::range);
    const std::string_view if_range = HeaderValue(req, http::field::if_range);
    if (!range_value.empty() && (if_range.empty() || IfRangeMatches(if_range, etag))) {
      range = ParseRange(range_value, size);
    }
    if (range.kind == RangeRequest::Kind::kUnsatisfiable) {  // RFC 9110 §15.5.17
      Response refused = Error(http::status::range_not_satisfiable,
                               "the range \"" + std::string(range_value) + "\" lies outside the " +
                                   std::to_string(size) + " bytes; ask for bytes=0-" +
                                   std::to_string(size == 0 ? 0 : size - 1) + " or less");
      refused.set(http::field::content_range, UnsatisfiedContentRange(size));
      refused.set(http::field::accept_ranges, "bytes");
      co_return co_await Send(stream, std::move(refused), keep_alive, head_only);
    }
    const ByteRange span = range.kind == RangeRequest::Kind::kPartial ? range.range
                                                                      : ByteRange{0, size == 0 ? 0 : size - 1};
    const uint64_t length = range.kind == RangeRequest::Kind::kPartial ? span.length() : size;
    if (range.kind == RangeRequest::Kind::kPartial) {
      res.result(http::status::partial_content);
      res.set(http::field::content_range, ContentRange(span, size));
    }
    res.set(http::field::content_type, "application/octet-stream");
    res.set(http::field::content_disposition, "attachment; filename=\"" + file_name + "\"");
    res.content_length(length);
    FileSenderOpening file = FileSender::Open(a.path, span.first);
    if (!file.sender) {
      co_return co_await Send(stream, Error(http::status::not_found, file_name + " cannot be read now"),
                              keep_alive, head_only);
    }
    if (!co_await SendHeader(stream, std::move(res), keep_alive)) co_return false;
    if (head_only) co_return keep_alive;
    co_return co_await SendFileRange(stream, *file.sender, length) && keep_alive;
  }

  // `length` bytes of `file`, sent by the kernel (platform/file_sender.h), waiting for
  // the socket whenever its buffer is full: a client that takes nothing for
  // kWriteTimeout is gone.
  awaitable<bool> SendFileRange(beast::tcp_stream& stream, FileSender& file, uint64_t length) {
    tcp::socket& socket = stream.socket();
    boost::system::error_code ec;
    socket.native_non_blocking(true, ec);
    while (length > 0 && !ec) {
      const FileSender::Sent sent =
          file.SendTo(socket.native_handle(), static_cast<size_t>(std::min<uint64_t>(length, kSendFileMax)));
      switch (sent.outcome) {
        case FileSender::Sent::Outcome::kSent:
          length -= sent.bytes;
          break;
        case FileSender::Sent::Outcome::kWouldBlock:
          ec = co_await WaitWritable(socket);
          break;
        case FileSender::Sent::Outcome::kEndOfFile:  // the file shrank: the length sent cannot be kept
        case FileSender::Sent::Outcome::kFailed:     // the client went away
          co_return false;
      }
    }
    co_return !ec;
  }

  // Waits until `socket` takes bytes again, or kWriteTimeout (then: timed_out).
  static awaitable<boost::system::error_code> WaitWritable(tcp::socket& socket) {
    struct Wait {
      bool over = false;  // the socket's wait ended: the deadline may not touch it
      bool expired = false;
    };
    auto wait = std::make_shared<Wait>();  // the deadline's handler may run after this frame is gone
    asio::steady_timer deadline(socket.get_executor(), kWriteTimeout);
    deadline.async_wait([&socket, wait](const boost::system::error_code& e) {
      if (e || wait->over) return;
      wait->expired = true;
      socket.cancel();
    });
    boost::system::error_code ec;
    co_await socket.async_wait(tcp::socket::wait_write, asio::redirect_error(use_awaitable, ec));
    wait->over = true;
    deadline.cancel();
    co_return wait->expired ? boost::system::error_code(asio::error::timed_out) : ec;
  }

  // Writes a response that has no body here (a 304, or the head of a streamed file).
  awaitable<bool> SendHeader(beast::tcp_stream& stream, http::response<http::empty_body> res, bool keep_alive) {
    res.set(http::field::server, "trtwatch");
    res.keep_alive(keep_alive);
    metrics_.Request(static_cast<int>(res.result_int()));
    http::response_serializer<http::empty_body> serializer(res);
    boost::system::error_code ec;
    stream.expires_after(kWriteTimeout);
    co_await http::async_write_header(stream, serializer, asio::redirect_error(use_awaitable, ec));
    co_return !ec;
  }

  static bool IsUiPath(std::string_view path) { return path == "/ui/session" || UiAssetFor(path).has_value(); }

  // The POSTs whose body is JSON: a build request, a cancel, a sign-in, an MCP message.
  static bool TakesJsonBody(http::verb method, std::string_view path) {
    if (method != http::verb::post) return false;
    const Endpoint endpoint = RouteOf(path).endpoint;
    return path == "/ui/session" || endpoint == Endpoint::kBuilds || endpoint == Endpoint::kBuildCancel ||
           endpoint == Endpoint::kGroupCancel || endpoint == Endpoint::kMcp;
  }

  // A stated Content-Type must be JSON; none is fine only without a body (a bare cancel).
  static bool AcceptableJsonType(const Request& req, bool has_body) {
    auto it = req.find(http::field::content_type);
    if (it == req.end()) return !has_body;
    return IsJsonMediaType(std::string_view(it->value().data(), it->value().size()));
  }

  awaitable<void> SendContinue(beast::tcp_stream& stream) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    boost::system::error_code ec;
    stream.expires_after(kWriteTimeout);
    co_await asio::async_write(stream, asio::buffer(kContinue.data(), kContinue.size()),
                               asio::redirect_error(use_awaitable, ec));
    stream.expires_after(kIdleTimeout);
  }

  // Closes our side. After a refusal the client may still be sending its request: that
  // is read and dropped for a moment, since closing with unread bytes resets the
  // connection and the reset can destroy the answer before the client reads it.
  static awaitable<void> Close(beast::tcp_stream& stream, bool linger) {
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

  // Answers a request whose head and body were read; returns whether the connection
  // stays open. HEAD is GET without the body (RFC 9110 §9.3.2).
  awaitable<bool> Dispatch(beast::tcp_stream& stream, Request& req) {
    const bool head_only = req.method() == http::verb::head;
    const http::verb method = head_only ? http::verb::get : req.method();
    const std::string_view target(req.target().data(), req.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    if (std::optional<Response> ui = HandleUi(req, method, path)) {
      co_return co_await Send(stream, std::move(*ui), req.keep_alive() && !stopping_, head_only);
    }
    const Route route = RouteOf(path);
    if (route.endpoint == Endpoint::kMcp) {  // MCP over Streamable HTTP, hosted (service/hosted_endpoint.h)
      if (head_only) co_return co_await Send(stream, MethodNotAllowed("POST, DELETE"), req.keep_alive(), true);
      co_return co_await mcp_.Serve(stream, req);
    }
    const bool stream_route = route.endpoint == Endpoint::kBuildEvents || route.endpoint == Endpoint::kBuildChanges;
    if (stream_route && head_only) {
      co_return co_await Send(stream, StreamHead(route), req.keep_alive() && !stopping_, true);
    }
    if (route.endpoint == Endpoint::kBuildEvents && method == http::verb::get) {
      co_await Events(stream, req, std::string(route.id));
      co_return false;
    }
    if (route.endpoint == Endpoint::kBuildChanges && method == http::verb::get) {
      co_await RecordChanges(stream);
      co_return false;
    }
    if (route.endpoint == Endpoint::kBuildEngine || route.endpoint == Endpoint::kBuildTimingCache) {
      if (method != http::verb::get) co_return co_await Send(stream, MethodNotAllowed("GET, HEAD"), req.keep_alive());
      co_return co_await Download(stream, req, route, head_only);
    }
    if (route.endpoint == Endpoint::kGroupEngine) {
      if (method != http::verb::get) co_return co_await Send(stream, MethodNotAllowed("GET, HEAD"), req.keep_alive());
      co_return co_await GroupDownload(stream, req, route, head_only);
    }
    Response res = Handle(req, method, path, target, route);
    co_return co_await Send(stream, std::move(res), req.keep_alive() && !stopping_, head_only);
  }

  // HEAD on an event stream: the headers a GET would start with, no events.
  Response StreamHead(const Route& route) {
    if (route.endpoint == Endpoint::kBuildEvents) {
      const std::string id(route.id);
      if (!ValidBuildId(id) || manager_.Get(id).outcome != GetOutcome::kFound) {
        return Error(http::status::not_found, "no build \"" + id + "\"; list builds with GET /builds");
      }
    }
    Response res{http::status::ok, 11};
    res.set(http::field::content_type, "text/event-stream; charset=utf-8");
    res.set(http::field::cache_control, "no-cache");
    return res;
  }

  // Writes a response; returns whether the connection stays open.
  // `head_only`: the answer to HEAD, its Content-Length that of the body not sent.
  awaitable<bool> Send(beast::tcp_stream& stream, Response res, bool keep_alive, bool head_only = false) {
    res.set(http::field::server, "trtwatch");
    res.keep_alive(keep_alive);
    res.prepare_payload();
    if (head_only) {
      // An event stream's GET has no length to announce.
      if (res[http::field::content_type].starts_with("text/event-stream")) res.erase(http::field::content_length);
      res.body().clear();
    }
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
  std::optional<Response> HandleUi(const Request& req, http::verb method, std::string_view path) {
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
      // JSON only (checked with the head): a cross-site HTML form cannot send it without
      // a CORS preflight.
      const json body = json::parse(req.body(), nullptr, /*allow_exceptions=*/false);
      if (!body.is_object() || !body.contains("token") || !body["token"].is_string()) {
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

  Response Handle(const Request& req, http::verb method, std::string_view path, std::string_view target,
                  const Route& route) {
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
      // Stopping: still answering (reads are served until the last build ends), but not
      // to be sent new work.
      Response res = JsonResponse(stopping_ ? http::status::service_unavailable : http::status::ok,
                                  json{{"status", stopping_ ? "stopping" : "ok"},
                                       {"store", "ok"},
                                       {"running", manager_.running()},
                                       {"queued", manager_.queued()}}
                                      .dump());
      if (stopping_) res.set(http::field::retry_after, "5");
      return res;
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
      if (method == http::verb::post && BuildGroups::AsksForGroup(req.body())) {
        GroupResult r = manager_.groups().Submit(req.body());
        const std::string location = r.outcome == GroupOutcome::kCreated ? "/groups/" + r.id : std::string();
        Response res = ApiResponse(std::move(r));
        if (!location.empty()) res.set(http::field::location, location);
        return res;
      }
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
    if (route.endpoint == Endpoint::kHistory || route.endpoint == Endpoint::kHistoryReport) {
      if (method != http::verb::get) return MethodNotAllowed("GET");
      return History(target, route.endpoint == Endpoint::kHistory ? HistoryRoute::kList : HistoryRoute::kReport);
    }
    if (route.endpoint == Endpoint::kBuildCompare) {
      if (method != http::verb::get) return MethodNotAllowed("GET");
      return Compare(std::string(route.id), target);
    }
    if (route.endpoint == Endpoint::kModels || route.endpoint == Endpoint::kModel ||
        route.endpoint == Endpoint::kModelFile) {
      return HandleModels(method, route);
    }
    if (route.endpoint == Endpoint::kGroup || route.endpoint == Endpoint::kGroupCancel ||
        route.endpoint == Endpoint::kGroupManifest) {
      return HandleGroup(req, method, route);
    }
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

  // GET /groups/{gid}, POST /groups/{gid}/cancel, GET /groups/{gid}/manifest.
  Response HandleGroup(const Request& req, http::verb method, const Route& route) {
    const std::string gid(route.id);
    if (!builds::ValidGroupId(gid)) {
      return Error(http::status::not_found, "no group \"" + gid + "\"; group ids look like g_ and 32 hex digits");
    }
    if (route.endpoint == Endpoint::kGroupCancel) {
      if (method != http::verb::post) return MethodNotAllowed("POST");
      return ApiResponse(manager_.groups().Cancel(gid, req.body()));
    }
    if (method != http::verb::get) return MethodNotAllowed("GET");
    if (route.endpoint == Endpoint::kGroupManifest) return ApiResponse(manager_.groups().Manifest(gid));
    return ApiResponse(manager_.groups().Get(gid));
  }

  static Response NotFound(std::string_view path) {
    return Error(http::status::not_found, "no such endpoint \"" + std::string(path) +
                                              "\"; see GET /openapi.json for the API");
  }

  Response List(std::string_view target) {
    ListQuery query;
    std::string error;
    if (!ParseListQuery(target, &query, &error)) return Error(http::status::bad_request, error);
    if (!query.group.empty()) return ListGroup(query);
    RecordStore::Page page = store_.List(query.statuses, static_cast<int>(query.limit), query.cursor, query.model);
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

  // GET /history, GET /history/report (docs/api.md).
  Response History(std::string_view target, HistoryRoute route) {
    HistoryFilter filter;
    std::string error;
    if (!ParseHistoryQuery(target, route, &filter, &error)) return Error(http::status::bad_request, error);
    builds::HistoryQuery query;
    query.model = filter.model;
    query.key = filter.key;
    query.limit = static_cast<int>(filter.limit);
    if (filter.since_seconds > 0) {
      query.finished_after = history::UnixNow() - static_cast<int64_t>(filter.since_seconds);
    }
    return HistoryResponse(route == HistoryRoute::kList ? builds::ListHistory(store_, query)
                                                        : builds::ReportHistory(store_, query));
  }

  // GET /builds/{id}/compare[?with=OTHER] (docs/api.md).
  Response Compare(const std::string& id, std::string_view target) {
    std::string with;
    std::string error;
    if (!ParseCompareQuery(target, &with, &error)) return Error(http::status::bad_request, error);
    for (const std::string& build : {id, with}) {
      if (build.empty()) continue;
      if (!ValidBuildId(build) || manager_.Get(build).outcome != GetOutcome::kFound) {
        return Error(http::status::not_found, "no build \"" + build + "\"; list builds with GET /builds");
      }
    }
    return HistoryResponse(builds::CompareBuilds(store_, id, with));
  }

  static Response HistoryResponse(builds::HistoryAnswer answer) {
    switch (answer.outcome) {
      case builds::HistoryAnswer::Outcome::kOk:
        return JsonResponse(http::status::ok, std::move(answer.body));
      case builds::HistoryAnswer::Outcome::kNotInHistory:
        return Error(http::status::conflict, answer.error);
      case builds::HistoryAnswer::Outcome::kStorageError:
        break;
    }
    Response res = Error(http::status::service_unavailable, answer.error);
    res.set(http::field::retry_after, "1");
    return res;
  }

  // GET /builds?group=GID: the group's members (at most 16: one page), in its order.
  Response ListGroup(const ListQuery& query) {
    std::string body = "{\"builds\":[";
    bool first = true;
    for (const std::string& record : manager_.groups().MemberRecords(query.group)) {
      const json doc = json::parse(record, nullptr, false);
      if (!query.statuses.empty() && doc.is_object() && doc.contains("status") &&
          std::find(query.statuses.begin(), query.statuses.end(), doc["status"]) == query.statuses.end()) {
        continue;
      }
      if (!first) body += ',';
      first = false;
      body += record;
    }
    body += "],\"next_cursor\":null}";
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
    std::string bad_query;
    if (!ParseEventsQuery(std::string_view(req.target().data(), req.target().size()), &cancel_on_disconnect,
                          &bad_query)) {
      co_await Send(stream, Error(http::status::bad_request, bad_query), false);
      co_return;
    }
    uint64_t last = 0;
    auto header = req.find("Last-Event-ID");
    if (header != req.end() &&
        !ParseLastEventId(std::string_view(header->value().data(), header->value().size()), &last)) {
      co_await Send(stream, Error(http::status::bad_request,
                                  "Last-Event-ID must be the decimal id (0 to 2^64-1, digits only) of an event "
                                  "this stream sent"),
                    false);
      co_return;
    }
    if (hubs_.clients() >= max_sse_clients_) {
      co_await Send(stream, RetryLater(http::status::too_many_requests, "open event streams", max_sse_clients_,
                                       "--max-sse-clients"),
                    false);
      co_return;
    }
    // Subscribed, the first page read and the stream handed over with no suspension in
    // between: the hub's live events start exactly after s.last_seq.
    const size_t hub = hubs_.Pick();
    const BuildManager::Subscription s = hubs_.Subscribe(hub, id);
    if (!s.found) {
      co_await Send(stream, Error(http::status::not_found, "no build \"" + id + "\"; list builds with GET /builds"),
                    false);
      co_return;
    }
    if (last > s.last_seq) {
      // Not an id this build has sent: following on would silently skip the events up to it.
      co_await Send(stream, Error(http::status::bad_request,
                                  "Last-Event-ID " + std::to_string(last) + " is ahead of this build's last event (" +
                                      std::to_string(s.last_seq) + "); reconnect without it to replay the log"),
                    false);
      co_return;
    }
    // Replay the log up to where the live feed starts, one bounded page at a time; the
    // first page is read before answering so that an unreadable log is a 500.
    std::vector<FramedEvent> page;
    uint64_t replayed = last;
    std::string error;
    if (replayed < s.last_seq && !manager_.ReplayPage(id, replayed, s.last_seq, &page, &replayed, &error)) {
      co_await Send(stream, Error(http::status::internal_server_error, error), false);
      co_return;
    }
    if (!s.live && replayed >= s.last_seq && page.empty()) {
      // The build is over and the client has every event: 204 stops EventSource reconnecting.
      Response res{http::status::no_content, 11};
      co_await Send(stream, std::move(res), false);
      co_return;
    }
    SseStreamSpec spec;
    spec.build_id = id;
    spec.after_seq = last;
    spec.replay_up_to = s.last_seq;
    spec.live = s.live;
    spec.cancel_on_disconnect = cancel_on_disconnect;
    spec.first_page = std::move(page);
    spec.replayed = replayed;
    hubs_.StartBuildStream(hub, stream.release_socket(), std::move(spec));
  }

  // GET /builds/changes: every record written from now on, as "record" events (the
  // dashboard's list stays current without polling). No replay: a client reads
  // GET /builds first, then applies the changes; a reconnect does the same.
  awaitable<void> RecordChanges(beast::tcp_stream& stream) {
    if (hubs_.clients() >= max_sse_clients_) {
      co_await Send(stream, RetryLater(http::status::too_many_requests, "open event streams", max_sse_clients_,
                                       "--max-sse-clients"),
                    false);
      co_return;
    }
    hubs_.StartRecordStream(hubs_.Pick(), stream.release_socket());
  }

  asio::io_context& io_;
  const ServerOptions& options_;
  BuildManager& manager_;
  RecordStore& store_;
  ArtifactStore& artifacts_;
  Metrics& metrics_;
  SseHubs& hubs_;
  const std::string token_;
  const int64_t max_connections_;
  const int64_t max_sse_clients_;
  int64_t connections_ = 0;
  bool stopping_ = false;
  UiSessions ui_sessions_{kUiSessionSeconds, kUiSessionLimit};
  HostedEndpoint& mcp_;
};

HttpApi::HttpApi(asio::io_context& io, const ServerOptions& options, BuildManager& manager, RecordStore& store,
                 ArtifactStore& artifacts, Metrics& metrics, SseHubs& hubs, std::string token, ConnectionCaps caps,
                 HostedEndpoint& mcp)
    : impl_(std::make_unique<Impl>(io, options, manager, store, artifacts, metrics, hubs, std::move(token), caps,
                                   mcp)) {}

HttpApi::~HttpApi() = default;

awaitable<void> HttpApi::Accept(tcp::acceptor& acceptor) { return impl_->Accept(acceptor); }

void HttpApi::set_stopping() { impl_->set_stopping(); }

}  // namespace trtwatch::service
