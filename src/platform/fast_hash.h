// FastHash: a fast non-cryptographic digest of bytes given in pieces, recorded beside
// an engine-cache entry's SHA-256 so that every hit can check every byte of the entry
// at copy speed (docs/cache.md, "Verified hits"). It catches damage (a flipped bit, a
// truncated or rewritten file), not an attacker who can write the cache's folder.
// POSIX: XXH3-128 from the system's libxxhash (Debian libxxhash-dev). Windows (MinGW,
// no libxxhash): SHA-256, slower but the same check; Algorithm() tells them apart, so
// an entry hashed by one is checked by its SHA-256 on the other.
//
// Threading: a FastHash is used by one thread at a time.
// Platform implementations: platform/posix/fast_hash.cc, platform/win32/fast_hash.cc.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace trtwatch {

class FastHash {
 public:
  FastHash();
  ~FastHash();
  FastHash(const FastHash&) = delete;
  FastHash& operator=(const FastHash&) = delete;

  void Update(std::string_view bytes);
  // The digest of everything given, in lowercase hex; the object then starts over.
  std::string FinalHex();

  // "xxh3-128" or "sha-256": the name recorded with the digest.
  static std::string_view Algorithm();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace trtwatch
