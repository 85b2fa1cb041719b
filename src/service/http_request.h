// The parts of handling an HTTP request that need no socket and no service state: the
// request target's path and query, build ids, the bearer token, the browser check.
// The connection (http_connection.cc) checks with them; fuzz/http_request_fuzz.cc drives them with hostile bytes.
//
// Threading: pure functions.
#pragma once

#include <boost/beast/http/message.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trtwatch::service {

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Percent-decodes a query key or value ('+' is a space, as forms send it). Returns
// false for a '%' not followed by two hex digits.
bool PercentDecode(std::string_view in, std::string* out);

// "a/b/" -> {"a", "b", ""}: every separator counts.
std::vector<std::string_view> Split(std::string_view s, char sep);

// A whole decimal integer (sign allowed), nothing else.
bool ParseInt(std::string_view s, int64_t* out);

// "b_" and 32 lowercase hex digits.
bool ValidBuildId(std::string_view id);


// The query's key=value pairs (after '?'), percent-decoded, in order. On bad encoding
// returns false with `*error` naming the pair and the fix.
bool ParseQuery(std::string_view target, std::vector<std::pair<std::string, std::string>>* pairs,
                std::string* error);

// The query of GET /builds: status=a,b&limit=N&cursor=C&model=SUBSTR&group=GID.
struct ListQuery {
  std::vector<std::string> statuses;  // empty: all
  std::string model;                  // empty: any
  std::string group;                  // a build group's id: its members only; empty: all builds
  int64_t limit = 20;
  int64_t cursor = 0;  // 0: the first page
};
// Parses the query part of `target` (after '?'; none: the defaults). On a bad query
// returns false with `*error` naming the problem and the fix.
bool ParseListQuery(std::string_view target, ListQuery* query, std::string* error);

// A model filter longer than this names no model (paths are at most a few KiB).
inline constexpr size_t kMaxModelFilter = 4096;

// The query of GET /history (model=SUBSTR&key=HEX&since=DUR&limit=N) and of GET
// /history/report (model, since).
struct HistoryFilter {
  std::string model;
  std::string key;           // 64 lowercase hex digits
  double since_seconds = 0;  // 0: any age
  int64_t limit = 100;       // 1 to 1000
};
enum class HistoryRoute { kList, kReport };
bool ParseHistoryQuery(std::string_view target, HistoryRoute route, HistoryFilter* filter, std::string* error);

// The query of GET /builds/{id}/compare: with=ID (optional).
bool ParseCompareQuery(std::string_view target, std::string* with, std::string* error);

// The query of GET /builds/{id}/events: cancel_on_disconnect=true|false and nothing
// else. On a bad query returns false with `*error` naming the known parameter.
bool ParseEventsQuery(std::string_view target, bool* cancel_on_disconnect, std::string* error);

// Limits on what a client sends before it is authenticated: they bound the memory one
// connection can hold, whatever it sends.
inline constexpr size_t kHeaderLimit = 16 * 1024;      // request line and header fields: beyond, 431
inline constexpr size_t kTargetLimit = 8 * 1024;       // the request target: beyond, 414
inline constexpr size_t kHeaderFieldLimit = 100;       // header fields: beyond, 431
inline constexpr size_t kChunkExtensionLimit = 1024;   // one chunk's extensions: beyond, 400
inline constexpr size_t kReadBufferLimit = 32 * 1024;  // unparsed bytes (a chunk-size line, trailers): beyond, 400

// Why a request is refused before its body is read, as an HTTP status and a message
// naming the rule and the fix; status 0: not refused.
struct HeadRefusal {
  int status = 0;
  std::string message;
  explicit operator bool() const { return status != 0; }
};

// What the checks below need of a request's head.
struct RequestHead {
  unsigned version = 11;  // 10: HTTP/1.0, 11: HTTP/1.1
  size_t target_size = 0;
  size_t field_count = 0;
  std::vector<std::string_view> hosts;               // one per Host line
  std::vector<std::string_view> transfer_encodings;  // one per Transfer-Encoding line
  std::vector<std::string_view> content_lengths;
  std::vector<std::string_view> expects;
};
// The head of a parsed request; its views point into `header`.
RequestHead HeadOf(const boost::beast::http::request_header<>& header);

// The limits above, Host (RFC 9112 §3.2), message framing (RFC 9112 §6.1, §6.3) and
// Expect (RFC 9110 §10.1.1). A refused request's connection is closed: its body, if
// any, cannot be delimited or is not wanted.
HeadRefusal CheckHead(const RequestHead& head);

// RFC 9112 §6.1/§6.3: Transfer-Encoding (all its lines as one list) must end in chunked,
// name it once and come without Content-Length; codings other than chunked are not
// implemented (501).
HeadRefusal CheckFraming(const std::vector<std::string_view>& transfer_encodings, bool has_content_length);

// Whether the client waits for "100 Continue" before it sends the body (RFC 9110 §10.1.1).
bool ExpectsContinue(const RequestHead& head);

// The status for a head larger than kHeaderLimit, from the target the parser got (empty
// when it did not get past the request line): 414 when the request line or its target
// is too long (RFC 9112 §3), else 431 (RFC 6585 §5).
int OversizedHeadStatus(std::string_view parsed_target);

// A single byte range, first and last byte inclusive (RFC 9110 §14.1.2).
struct ByteRange {
  uint64_t first = 0;
  uint64_t last = 0;
  uint64_t length() const { return last - first + 1; }
};
// What a Range header asks of a representation of `size` bytes (RFC 9110 §14.2).
struct RangeRequest {
  enum class Kind {
    kWhole,          // no range, a unit other than bytes, an invalid set, or several ranges: 200, the whole
    kPartial,        // one satisfiable range: 206 with Content-Range
    kUnsatisfiable,  // one range, none of it in the representation: 416, Content-Range: bytes */size
  };
  Kind kind = Kind::kWhole;
  ByteRange range;
};
// `bytes=a-b`, `bytes=a-` or `bytes=-n` (RFC 9110 §14.1.2); whitespace around ranges
// allowed. Several ranges are answered whole, which §14.2 allows.
RangeRequest ParseRange(std::string_view value, uint64_t size);

// "bytes a-b/size" (RFC 9110 §14.4) and, for a 416, "bytes */size".
std::string ContentRange(const ByteRange& range, uint64_t size);
std::string UnsatisfiedContentRange(uint64_t size);

// Whether an If-None-Match value (`*` or entity tags, weak or not) matches `etag`, a
// strong tag with its quotes, by the weak comparison (RFC 9110 §13.1.2).
bool IfNoneMatchMatches(std::string_view value, std::string_view etag);
// Whether an If-Range value lets a range through: only the same strong tag does (RFC
// 9110 §13.1.5; this service sends no Last-Modified, so a date never matches).
bool IfRangeMatches(std::string_view value, std::string_view etag);

// The SHA-256 a client says its body has: Content-Digest's sha-256 member (RFC 9530
// §2, a Structured Fields byte sequence ":BASE64:") and/or X-Content-SHA256 (64 hex
// digits). Both given must agree.
struct ExpectedDigest {
  std::optional<std::array<uint8_t, 32>> sha256;  // none asked for: nullopt
  std::string error;                              // a malformed header: why, and the fix
};
// `content_digest`/`x_sha256`: the header values, nullopt when absent.
ExpectedDigest ExpectedSha256(std::optional<std::string_view> content_digest, std::optional<std::string_view> x_sha256);

// Standard base64 (RFC 4648 §4), padding optional; nullopt for other characters.
std::optional<std::string> Base64Decode(std::string_view text);

// Whether a Content-Type value is application/json: type and subtype are
// case-insensitive and parameters (charset) may follow (RFC 9110 §8.3.1).
bool IsJsonMediaType(std::string_view content_type);

// The token of an "Authorization: Bearer TOKEN" value (the scheme is case-insensitive,
// then one or more spaces); nullopt for any other value.
std::optional<std::string_view> BearerToken(std::string_view authorization);

}  // namespace trtwatch::service
