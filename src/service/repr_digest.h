// The digest on everything that leaves (RFC 9530): engines, timing caches, uploaded
// models' files and group manifests are sent with `Repr-Digest: sha-256=:BASE64:`, the
// SHA-256 of the whole representation (a 206 carries the full file's, not the part's:
// RFC 9530 §3), and a strong ETag that is the same digest in hex (RFC 9110 §8.8.3).
//
// The service always sends it (a digest it already holds costs nothing): a client's
// Want-Repr-Digest (RFC 9530 §4) is honoured by that, except that one giving sha-256
// the weight 0 ("not acceptable") gets none, since sha-256 is the only algorithm sent.
//
// Threading: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace trtwatch::service {

// "sha-256=:BASE64:" for a SHA-256 given in hex (64 digits); empty for anything else.
[[nodiscard]] std::string ReprDigestOfHex(std::string_view sha256_hex);
// "sha-256=:BASE64:" of `bytes` (a whole answer's body, e.g. a manifest).
[[nodiscard]] std::string ReprDigestOfBytes(std::string_view bytes);
// Whether a Want-Repr-Digest value (empty: absent) lets sha-256 be sent: false only
// when it names sha-256 with the weight 0 (RFC 9530 §4).
[[nodiscard]] bool WantsSha256ReprDigest(std::string_view want_repr_digest);
// Standard base64 with padding (RFC 4648 §4).
[[nodiscard]] std::string Base64Encode(std::string_view bytes);

}  // namespace trtwatch::service
