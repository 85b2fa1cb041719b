// The service's HTTP request path without a socket: the bytes of one request go
// through Beast's parser with the server's limits, then through what the server does
// with every request (the head's checks: limits, Host, framing, Expect; the browser
// check, the bearer token, the session cookie), its router, and the parser of the
// endpoint the route selects (the list query, the build id, the build request, the
// cancel body, Last-Event-ID and the stream's query, the sign-in body, JSON-RPC for
// /mcp). Properties: nothing throws, every refusal has a message the service can send
// as JSON, and what is accepted is in range.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "mcp/json_rpc.h"
#include "builds/build_record.h"
#include "builds/build_request.h"
#include "service/http_request.h"
#include "service/route_table.h"
#include "service/server.h"
#include "service/sse.h"
#include "service/ui_session.h"
#include "protocol/utf8.h"

namespace http = boost::beast::http;
using nlohmann::json;
using namespace trtwatch::service;
using namespace trtwatch::builds;  // the request rules the service applies
using trtwatch::ValidUtf8;

namespace {

// What the server's Error() does with a message that may quote the client's bytes.
void CheckSendable(const std::string& message) {
  FUZZ_CHECK(!message.empty());
  try {
    const std::string body = json{{"error", ValidUtf8(message)}}.dump();
    FUZZ_CHECK(!body.empty());
  } catch (const json::exception&) {
    FUZZ_CHECK(!"an error message the service cannot send");
  }
}

std::string_view Header(const http::request<http::string_body>& req, std::string_view name) {
  auto it = req.find(boost::beast::string_view(name.data(), name.size()));
  return it == req.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  http::request_parser<http::string_body> parser;
  parser.header_limit(kHeaderLimit);  // as the server sets them
  parser.body_limit(64 * 1024);
  parser.eager(true);
  boost::beast::error_code ec;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!parser.is_done() && !rest.empty()) {
    const size_t used = parser.put(boost::asio::buffer(rest.data(), rest.size()), ec);
    if (ec) break;
    rest.remove_prefix(used);
    if (used == 0) break;
  }
  if (ec == http::error::need_more || (!ec && !parser.is_done())) parser.put_eof(ec);
  if (ec || !parser.is_done()) return 0;  // the server answers 400 and closes
  const http::request<http::string_body>& req = parser.get();

  const RequestHead head = HeadOf(req);
  if (const HeadRefusal refusal = CheckHead(head)) {  // the server answers it and closes
    FUZZ_CHECK(refusal.status >= 400 && refusal.status <= 599);
    CheckSendable(refusal.message);
    return 0;
  }
  FUZZ_CHECK(head.field_count <= kHeaderFieldLimit && head.target_size <= kTargetLimit);
  IsJsonMediaType(Header(req, "Content-Type"));

  const std::string_view target(req.target().data(), req.target().size());
  const std::string_view path = target.substr(0, target.find('?'));

  static const ServerOptions options = [] {
    ServerOptions o;
    o.allowed_origins = {"http://allowed.example:8080"};
    o.allowed_hosts = {"allowed.example"};
    return o;
  }();
  const bool credentials_required = size % 2 == 1;
  const std::string refused = BrowserCheck(Header(req, "Origin"), Header(req, "Host"), credentials_required, options);
  if (!refused.empty()) CheckSendable(refused);

  if (std::optional<std::string_view> token = BearerToken(Header(req, "Authorization"))) {
    FUZZ_CHECK(token->empty() || token->front() != ' ');
    TokenMatches(std::string(*token), "0123456789abcdef0123456789abcdef");
  }
  const std::string_view cookie = CookieValue(Header(req, "Cookie"), kSessionCookieName);
  FUZZ_CHECK(cookie.size() <= Header(req, "Cookie").size());

  if (path == "/ui/session" && req.method() == http::verb::post) {
    const json body = json::parse(req.body(), nullptr, /*allow_exceptions=*/false);
    if (body.is_object() && body.contains("token") && body["token"].is_string()) {
      TokenMatches(body["token"].get<std::string>(), "0123456789abcdef0123456789abcdef");
    }
    return 0;
  }

  const Route route = RouteOf(path);
  switch (route.endpoint) {
    case Endpoint::kMcp: {
      const trtwatch::mcp::Message m = trtwatch::mcp::ParseMessage(req.body());
      if (m.kind == trtwatch::mcp::Message::Kind::kInvalid) FUZZ_CHECK(m.error_response.contains("error"));
      break;
    }
    case Endpoint::kBuilds:
      if (req.method() == http::verb::post) {
        static const RequestPaths paths = {{"/nonexistent-trtwatch-fuzz-models"}, "/nonexistent-trtwatch-fuzz-data"};
        const trtwatch::Result<BuildRequest> request = ParseBuildRequest(req.body(), paths);
        if (request.ok()) {
          FUZZ_CHECK(!WorkerArguments(*request, "/tmp/fuzz.engine").empty());
        } else {
          CheckSendable(request.error());
        }
      } else {
        ListQuery query;
        std::string error;
        if (ParseListQuery(target, &query, &error)) {
          FUZZ_CHECK(query.limit >= 1 && query.limit <= 200 && query.cursor >= 0);
          for (const std::string& s : query.statuses) {
            BuildState state;
            FUZZ_CHECK(ParseBuildState(s, &state));
          }
        } else {
          CheckSendable(error);
        }
      }
      break;
    case Endpoint::kBuild:
    case Endpoint::kBuildCancel:
    case Endpoint::kBuildTrace:
    case Endpoint::kBuildEvents: {
      FUZZ_CHECK(path.find(route.id) != std::string_view::npos);
      if (!ValidBuildId(route.id)) {
        CheckSendable("no build \"" + std::string(route.id) + "\"; build ids look like b_ and 32 hex digits");
        break;
      }
      if (route.endpoint == Endpoint::kBuildCancel) {
        std::optional<double> grace;
        std::string error;
        if (ParseCancelBody(req.body(), &grace, &error)) {
          FUZZ_CHECK(!grace || (*grace >= 0 && *grace <= kMaxCancelGraceSeconds));
        } else {
          CheckSendable(error);
        }
      } else if (route.endpoint == Endpoint::kBuildEvents) {
        uint64_t last = 0;
        ParseLastEventId(Header(req, "Last-Event-ID"), &last);
        bool cancel_on_disconnect = false;
        std::string error;
        if (!ParseEventsQuery(target, &cancel_on_disconnect, &error)) CheckSendable(error);
      }
      break;
    }
    case Endpoint::kNotFound:
      CheckSendable("no such endpoint \"" + std::string(path) + "\"; see GET /openapi.json for the API");
      break;
    default:
      break;
  }
  return 0;
}
