#include "service/repr_digest.h"

#include "platform/sha256.h"
#include "service/http_request.h"  // Split

namespace trtwatch::service {

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (uint32_t{static_cast<uint8_t>(bytes[i])} << 16) |
                       (uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8) | static_cast<uint8_t>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(v >> shift) & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t{static_cast<uint8_t>(bytes[i])} << 16;
    if (rest == 2) v |= uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

namespace {

std::string ReprDigestOfSha256(const Sha256Digest& digest) {
  return "sha-256=:" + Base64Encode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size())) + ":";
}

std::string_view TrimReprWant(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string ReprDigestOfHex(std::string_view sha256_hex) {
  const std::optional<Sha256Digest> digest = DigestFromHex(sha256_hex);
  return digest ? ReprDigestOfSha256(*digest) : std::string();
}

std::string ReprDigestOfBytes(std::string_view bytes) { return ReprDigestOfSha256(Sha256Of(bytes)); }

bool WantsSha256ReprDigest(std::string_view want_repr_digest) {
  // A Structured Fields dictionary of algorithm = integer 0..10 (RFC 9530 §4).
  for (std::string_view member : Split(want_repr_digest, ',')) {
    const size_t eq = member.find('=');
    if (TrimReprWant(member.substr(0, eq)) != "sha-256") continue;
    return eq == std::string_view::npos || TrimReprWant(member.substr(eq + 1)) != "0";
  }
  return true;
}

}  // namespace trtwatch::service
