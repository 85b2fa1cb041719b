#include "service/http_request.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iterator>

#include "builds/build_group.h"  // ValidGroupId
#include "builds/build_record.h"
#include "runner/duration.h"

namespace trtwatch::service {

// The builds layer's names this file uses.
using builds::BuildState;
using builds::ParseBuildState;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

bool PercentDecode(std::string_view in, std::string* out) {
  out->clear();
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      *out += ' ';
    } else if (in[i] != '%') {
      *out += in[i];
    } else {
      if (i + 2 >= in.size()) return false;
      const int hi = hex(in[i + 1]), lo = hex(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      *out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
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

bool ValidBuildId(std::string_view id) {
  if (id.size() != 34 || id.substr(0, 2) != "b_") return false;
  for (char c : id.substr(2)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}


bool ParseQuery(std::string_view target, std::vector<std::pair<std::string, std::string>>* pairs,
                std::string* error) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return true;
  for (std::string_view pair : Split(target.substr(q + 1), '&')) {
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    std::string key, value;
    if (!PercentDecode(pair.substr(0, eq), &key) ||
        !PercentDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), &value)) {
      *error = "bad percent-encoding in the query \"" + std::string(pair) + "\"; encode '%' as %25";
      return false;
    }
    pairs->emplace_back(std::move(key), std::move(value));
  }
  return true;
}

namespace {

// "model=SUBSTR" of a list or of the history: a part of a model's name or path, bounded.
bool ParseModelFilter(const std::string& value, std::string* model, std::string* error) {
  if (value.empty() || value.size() > kMaxModelFilter) {
    *error = "model must be a part of a model's name or path (1 to " + std::to_string(kMaxModelFilter) + " bytes)";
    return false;
  }
  *model = value;
  return true;
}

}  // namespace

bool ParseListQuery(std::string_view target, ListQuery* query, std::string* error) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (!ParseQuery(target, &pairs, error)) return false;
  for (const auto& [key, value] : pairs) {
    if (key == "status") {
      for (std::string_view s : Split(value, ',')) {
        BuildState state;
        if (!ParseBuildState(s, &state)) {
          *error = "unknown status \"" + std::string(s) +
                   "\"; use queued, running, cancelling, succeeded, failed, cancelled, timed_out or interrupted "
                   "(comma-separated)";
          return false;
        }
        query->statuses.emplace_back(s);
      }
    } else if (key == "limit") {
      if (!ParseInt(value, &query->limit) || query->limit < 1 || query->limit > 200) {
        *error = "limit must be an integer from 1 to 200";
        return false;
      }
    } else if (key == "cursor") {
      if (!ParseInt(value, &query->cursor) || query->cursor < 1) {
        *error = "cursor must be the next_cursor of a previous page";
        return false;
      }
    } else if (key == "model") {
      if (!ParseModelFilter(value, &query->model, error)) return false;
    } else if (key == "group") {
      if (!builds::ValidGroupId(value)) {
        *error = "group must be a build group's id: g_ and 32 hex digits (the id POST /builds answered with \"targets\")";
        return false;
      }
      query->group = value;
    } else {
      *error = "unknown query parameter \"" + key + "\"; use status, limit, cursor, model or group";
      return false;
    }
  }
  return true;
}

bool ParseHistoryQuery(std::string_view target, HistoryRoute route, HistoryFilter* filter, std::string* error) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (!ParseQuery(target, &pairs, error)) return false;
  const bool list = route == HistoryRoute::kList;
  for (const auto& [key, value] : pairs) {
    if (key == "model") {
      if (!ParseModelFilter(value, &filter->model, error)) return false;
    } else if (key == "since") {
      std::string why;
      if (!ParseDuration(value, &filter->since_seconds, &why) || filter->since_seconds <= 0) {
        *error = "since must be a duration like 90m, 2h or 7d" + (why.empty() ? std::string() : " (" + why + ")");
        return false;
      }
    } else if (list && key == "key") {
      if (!builds::IsKeyDigest(value)) {
        *error = "key must be a build key's digest: 64 lowercase hex digits, as GET /history lists them";
        return false;
      }
      filter->key = value;
    } else if (list && key == "limit") {
      if (!ParseInt(value, &filter->limit) || filter->limit < 1 || filter->limit > 1000) {
        *error = "limit must be an integer from 1 to 1000";
        return false;
      }
    } else {
      *error = "unknown query parameter \"" + key + "\"; use " + (list ? "model, key, since or limit" : "model or since");
      return false;
    }
  }
  return true;
}

bool ParseCompareQuery(std::string_view target, std::string* with, std::string* error) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (!ParseQuery(target, &pairs, error)) return false;
  for (const auto& [key, value] : pairs) {
    if (key != "with") {
      *error = "unknown query parameter \"" + key + "\"; the only one is with (another build's id)";
      return false;
    }
    if (!ValidBuildId(value)) {
      *error = "with must be a build id (b_ and 32 hex digits), as GET /history lists them";
      return false;
    }
    *with = value;
  }
  return true;
}

bool ParseEventsQuery(std::string_view target, bool* cancel_on_disconnect, std::string* error) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (!ParseQuery(target, &pairs, error)) return false;
  for (const auto& [key, value] : pairs) {
    if (key != "cancel_on_disconnect") {
      *error = "unknown query parameter \"" + key + "\"; the only one is cancel_on_disconnect";
      return false;
    }
    if (value != "true" && value != "false") {
      *error = "cancel_on_disconnect must be true or false";
      return false;
    }
    *cancel_on_disconnect = value == "true";
  }
  return true;
}

namespace {

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The elements of a comma-separated header list over all its lines, empty ones
// dropped (RFC 9110 §5.6.1).
std::vector<std::string_view> ListElements(const std::vector<std::string_view>& lines) {
  std::vector<std::string_view> elements;
  for (std::string_view line : lines) {
    for (std::string_view element : Split(line, ',')) {
      element = TrimOws(element);
      if (!element.empty()) elements.push_back(element);
    }
  }
  return elements;
}

std::vector<std::string_view> ValuesOf(const boost::beast::http::fields& fields, boost::beast::http::field name) {
  std::vector<std::string_view> values;
  for (auto [it, end] = fields.equal_range(name); it != end; ++it) {
    values.emplace_back(it->value().data(), it->value().size());
  }
  return values;
}

}  // namespace

RequestHead HeadOf(const boost::beast::http::request_header<>& header) {
  namespace http = boost::beast::http;
  RequestHead head;
  head.version = header.version();
  head.target_size = header.target().size();
  head.field_count = static_cast<size_t>(std::distance(header.begin(), header.end()));
  head.hosts = ValuesOf(header, http::field::host);
  head.transfer_encodings = ValuesOf(header, http::field::transfer_encoding);
  head.content_lengths = ValuesOf(header, http::field::content_length);
  head.expects = ValuesOf(header, http::field::expect);
  return head;
}

HeadRefusal CheckFraming(const std::vector<std::string_view>& transfer_encodings, bool has_content_length) {
  if (transfer_encodings.empty()) return {};
  if (has_content_length) {
    return {400, "Transfer-Encoding and Content-Length together cannot delimit a body (RFC 9112 §6.1); send one"};
  }
  const std::vector<std::string_view> codings = ListElements(transfer_encodings);
  if (codings.empty() || !EqualsIgnoreCase(codings.back(), "chunked")) {
    return {400, "the final Transfer-Encoding must be chunked (RFC 9112 §6.3); send Transfer-Encoding: chunked or "
                 "Content-Length"};
  }
  const auto chunked = [](std::string_view coding) { return EqualsIgnoreCase(coding, "chunked"); };
  if (std::count_if(codings.begin(), codings.end(), chunked) > 1) {
    return {400, "chunked may be applied only once (RFC 9112 §7); send Transfer-Encoding: chunked"};
  }
  if (codings.size() > 1) {
    return {501, "transfer coding \"" + std::string(codings.front()) +
                     "\" is not implemented (RFC 9112 §6.1); send the body with chunked alone or Content-Length"};
  }
  return {};
}

HeadRefusal CheckHead(const RequestHead& head) {
  if (head.target_size > kTargetLimit) {
    return {414, "the request target is longer than " + std::to_string(kTargetLimit) + " bytes (RFC 9112 §3); "
                 "shorten the URL"};
  }
  if (head.field_count > kHeaderFieldLimit) {
    return {431, "more than " + std::to_string(kHeaderFieldLimit) + " header fields (RFC 6585 §5); send fewer"};
  }
  if (head.hosts.size() > 1 || (head.hosts.empty() && head.version >= 11)) {
    return {400, "an HTTP/1.1 request needs exactly one Host header (RFC 9112 §3.2)"};
  }
  if (HeadRefusal framing = CheckFraming(head.transfer_encodings, !head.content_lengths.empty())) return framing;
  for (std::string_view expectation : ListElements(head.expects)) {
    if (!EqualsIgnoreCase(expectation, "100-continue")) {
      return {417, "expectation \"" + std::string(expectation) +
                       "\" cannot be met; this service knows only 100-continue (RFC 9110 §10.1.1)"};
    }
  }
  return {};
}

bool ExpectsContinue(const RequestHead& head) {
  // An HTTP/1.0 client cannot read an interim response (RFC 9110 §10.1.1).
  return head.version >= 11 && !ListElements(head.expects).empty();
}

int OversizedHeadStatus(std::string_view parsed_target) {
  return parsed_target.empty() || parsed_target.size() > kTargetLimit ? 414 : 431;
}

namespace {

// Digits only, saturating at the largest uint64_t: a position past any file is still a position.
bool ParseBytePos(std::string_view s, uint64_t* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) return false;
  *out = 0;
  for (char c : s) {
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    *out = *out > (UINT64_MAX - digit) / 10 ? UINT64_MAX : *out * 10 + digit;
  }
  return true;
}

}  // namespace

RangeRequest ParseRange(std::string_view value, uint64_t size) {
  // RFC 9110 §14.2: a range unit other than bytes, or a syntactically invalid set, is
  // ignored (the whole is sent); several ranges may be answered with the whole.
  RangeRequest whole;
  const size_t eq = value.find('=');
  if (eq == std::string_view::npos || !EqualsIgnoreCase(TrimOws(value.substr(0, eq)), "bytes")) return whole;
  const std::vector<std::string_view> specs = ListElements({value.substr(eq + 1)});
  if (specs.size() != 1) return whole;
  const std::string_view spec = specs.front();
  const size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return whole;
  uint64_t first = 0, last = 0;
  const std::string_view first_text = spec.substr(0, dash), last_text = spec.substr(dash + 1);
  RangeRequest r;
  r.kind = RangeRequest::Kind::kPartial;
  if (first_text.empty()) {  // suffix-range "-n": the last n bytes (§14.1.2)
    if (!ParseBytePos(last_text, &last)) return whole;
    if (last == 0 || size == 0) return {RangeRequest::Kind::kUnsatisfiable, {}};
    r.range = {size - std::min(last, size), size - 1};
    return r;
  }
  if (!ParseBytePos(first_text, &first)) return whole;
  if (last_text.empty()) {
    last = UINT64_MAX;
  } else if (!ParseBytePos(last_text, &last) || last < first) {
    return whole;  // invalid: last-pos before first-pos (§14.1.2)
  }
  if (first >= size) return {RangeRequest::Kind::kUnsatisfiable, {}};  // §14.1.1: first-pos past the end
  r.range = {first, std::min(last, size - 1)};
  return r;
}

std::string ContentRange(const ByteRange& range, uint64_t size) {
  return "bytes " + std::to_string(range.first) + "-" + std::to_string(range.last) + "/" + std::to_string(size);
}

std::string UnsatisfiedContentRange(uint64_t size) { return "bytes */" + std::to_string(size); }

bool IfNoneMatchMatches(std::string_view value, std::string_view etag) {
  // RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, and etagc may be a
  // comma: the list is scanned tag by tag, not split on commas.
  const std::string_view trimmed = TrimOws(value);
  if (trimmed == "*") return true;
  size_t i = 0;
  while (i < value.size()) {
    while (i < value.size() && (value[i] == ' ' || value[i] == '\t' || value[i] == ',')) ++i;
    if (i >= value.size()) break;
    if (value.substr(i, 2) == "W/") i += 2;  // weak comparison: the W/ does not count
    if (i >= value.size() || value[i] != '"') return false;  // malformed: no match
    const size_t close = value.find('"', i + 1);
    if (close == std::string_view::npos) return false;
    if (value.substr(i, close - i + 1) == etag) return true;
    i = close + 1;
  }
  return false;
}

bool IfRangeMatches(std::string_view value, std::string_view etag) { return TrimOws(value) == etag; }

std::optional<std::string> Base64Decode(std::string_view text) {
  auto sextet = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    const int v = sextet(c);
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    if (++count == 4) {
      out += static_cast<char>(bits >> 16);
      out += static_cast<char>(bits >> 8);
      out += static_cast<char>(bits);
      bits = 0;
      count = 0;
    }
  }
  if (count == 3) {
    out += static_cast<char>(bits >> 10);
    out += static_cast<char>(bits >> 2);
  } else if (count == 2) {
    out += static_cast<char>(bits >> 4);
  }
  return out;
}

namespace {

using Digest = std::array<uint8_t, 32>;

std::optional<Digest> DigestOf(std::string_view bytes) {
  if (bytes.size() != 32) return std::nullopt;
  Digest d{};
  std::copy(bytes.begin(), bytes.end(), d.begin());
  return d;
}

// Content-Digest's sha-256 member (RFC 9530 §2: a Structured Fields dictionary whose
// values are byte sequences, RFC 8941 §3.3.5).
ExpectedDigest FromContentDigest(std::string_view value) {
  static const std::string kFix = "; send Content-Digest: sha-256=:BASE64 OF THE 32-BYTE DIGEST: (RFC 9530)";
  bool other_algorithm = false;
  for (std::string_view member : ListElements({value})) {
    const size_t eq = member.find('=');
    const std::string_view key = TrimOws(member.substr(0, eq));
    if (key != "sha-256") {
      other_algorithm = true;
      continue;
    }
    const std::string_view item = eq == std::string_view::npos ? "" : TrimOws(member.substr(eq + 1));
    if (item.size() < 2 || item.front() != ':' || item.back() != ':') {
      return {std::nullopt, "Content-Digest's sha-256 is not a byte sequence (:BASE64:)" + kFix};
    }
    const std::optional<std::string> bytes = Base64Decode(item.substr(1, item.size() - 2));
    std::optional<Digest> digest = bytes ? DigestOf(*bytes) : std::nullopt;
    if (!digest) return {std::nullopt, "Content-Digest's sha-256 is not the base64 of 32 bytes" + kFix};
    return {digest, {}};
  }
  return {std::nullopt, other_algorithm ? "Content-Digest names no sha-256, the only algorithm this service checks" + kFix
                                        : "Content-Digest is empty" + kFix};
}

std::optional<Digest> FromHex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  std::string bytes;
  for (size_t i = 0; i < 64; i += 2) {
    uint8_t b = 0;
    auto [p, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, b, 16);
    if (ec != std::errc() || p != hex.data() + i + 2) return std::nullopt;
    bytes += static_cast<char>(b);
  }
  return DigestOf(bytes);
}

}  // namespace

ExpectedDigest ExpectedSha256(std::optional<std::string_view> content_digest, std::optional<std::string_view> x_sha256) {
  ExpectedDigest result;
  if (content_digest) {
    result = FromContentDigest(*content_digest);
    if (!result.error.empty()) return result;
  }
  if (x_sha256) {
    const std::optional<Digest> hex = FromHex(TrimOws(*x_sha256));
    if (!hex) return {std::nullopt, "X-Content-SHA256 must be the body's SHA-256 as 64 hex digits"};
    if (result.sha256 && *result.sha256 != *hex) {
      return {std::nullopt, "Content-Digest and X-Content-SHA256 name different digests; send one, or the same"};
    }
    result.sha256 = hex;
  }
  return result;
}

bool IsJsonMediaType(std::string_view content_type) {
  const std::string_view media_type = TrimOws(content_type.substr(0, content_type.find(';')));
  return EqualsIgnoreCase(media_type, "application/json");
}

std::optional<std::string_view> BearerToken(std::string_view value) {
  // RFC 9110: the scheme is case-insensitive, followed by one or more spaces.
  constexpr std::string_view kBearer = "bearer";
  if (value.size() <= kBearer.size() || !EqualsIgnoreCase(value.substr(0, kBearer.size()), kBearer) ||
      value[kBearer.size()] != ' ') {
    return std::nullopt;
  }
  value.remove_prefix(kBearer.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  return value;
}

}  // namespace trtwatch::service
