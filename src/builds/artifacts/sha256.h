// SHA-256 (FIPS 180-4) over bytes given in pieces, for the artifact store's digests
// (engines, timing caches, uploaded models) and the upload's integrity check. OpenSSL's
// libcrypto (EVP) does the work; this header keeps it out of every includer.
//
// Threading: a Sha256 is used by one thread at a time; the free functions are pure.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace trtwatch::builds {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view bytes);
  // The digest of everything given; the object then starts over.
  Sha256Digest Final();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

Sha256Digest Sha256Of(std::string_view bytes);

// 64 lowercase hex digits.
std::string HexOf(const Sha256Digest& digest);
// 64 hex digits (either case) back to a digest; nullopt for anything else.
std::optional<Sha256Digest> DigestFromHex(std::string_view hex);

}  // namespace trtwatch::builds
