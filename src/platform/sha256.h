// SHA-256 (FIPS 180-4) over bytes given in pieces, and of whole files: the artifact
// store's digests (engines, timing caches, uploaded models), the upload's integrity
// check, and the build key's model, external-data and plugin digests (keys/).
// The system's library does the work: OpenSSL's libcrypto (EVP, SHA-NI where the CPU
// has it) on POSIX, BCrypt on Windows; this header keeps both out of every includer.
//
// Threading: a Sha256 is used by one thread at a time; the free functions are pure.
// Platform implementations: platform/posix/sha256.cc, platform/win32/sha256.cc; the
// portable rest is platform/sha256.cc.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace trtwatch {

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

// The digest of a whole file, read in large pieces: the digest and the bytes read, or
// why the file could not be read (the error names the path).
struct FileSha256 {
  std::optional<Sha256Digest> digest;  // absent on error
  uint64_t size = 0;
  std::string error;
};
FileSha256 Sha256OfFile(const std::string& path);

// 64 lowercase hex digits.
std::string HexOf(const Sha256Digest& digest);
// 64 hex digits (either case) back to a digest; nullopt for anything else.
std::optional<Sha256Digest> DigestFromHex(std::string_view hex);

}  // namespace trtwatch
