// EngineDigests: what an engine-cache entry's engine is recorded with when stored (its
// SHA-256, and a fast whole-file hash beside it), and EngineHasher, which computes them
// while the engine is copied into the cache, or checks every byte against them while a
// hit is copied out (docs/cache.md, "Verified hits").
//
// Threading: an EngineHasher is used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "platform/fast_hash.h"
#include "platform/sha256.h"

namespace trtwatch::cache {

struct EngineDigests {
  std::string sha256;          // 64 hex digits
  std::string fast;            // FastHash's digest in hex; empty in entries stored before it was kept
  std::string fast_algorithm;  // FastHash::Algorithm() of the process that stored it
};

class EngineHasher {
 public:
  // Storing: both digests of the bytes given.
  EngineHasher();
  // Checking against `recorded`: the fast hash where it was recorded by this build's
  // algorithm, else the SHA-256.
  explicit EngineHasher(const EngineDigests& recorded);

  void Update(std::string_view bytes);
  // Storing: the digests of everything given.
  [[nodiscard]] EngineDigests Final();
  // Checking: why the bytes given are not the recorded ones (`size` of them, where
  // `recorded_size` were stored); empty when they are.
  [[nodiscard]] std::string Mismatch(uint64_t size, uint64_t recorded_size);

 private:
  std::optional<EngineDigests> recorded_;
  std::optional<Sha256> sha256_;
  std::optional<FastHash> fast_;
};

}  // namespace trtwatch::cache
