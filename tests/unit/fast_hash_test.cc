// The engine cache's fast hash (platform/fast_hash.h) and its check of every byte
// (cache/engine_digests.h): the published XXH3-128 digests, pieces hash as the whole
// does, and a checker tells a flipped byte, a size change and an older entry (SHA-256
// only) apart from good bytes.
#include "platform/fast_hash.h"

#include <gtest/gtest.h>

#include <string>

#include "cache/engine_digests.h"

namespace trtwatch {
namespace {

std::string FastHex(std::string_view bytes) {
  FastHash hash;
  hash.Update(bytes);
  return hash.FinalHex();
}

TEST(FastHashTest, MatchesThePublishedDigests) {
#ifdef _WIN32
  EXPECT_EQ(FastHash::Algorithm(), "sha-256");
  EXPECT_EQ(FastHex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
#else
  EXPECT_EQ(FastHash::Algorithm(), "xxh3-128");
  EXPECT_EQ(FastHex(""), "99aa06d3014798d86001c324468d497f");  // xxhsum -H2 /dev/null
  EXPECT_EQ(FastHex("abc"), "06b05ab6733a618578af5f94892f3950");
#endif
}

TEST(FastHashTest, PiecesHashAsTheWholeAndTheObjectStartsOver) {
  const std::string bytes(1 << 20, 'e');
  FastHash hash;
  hash.Update(std::string_view(bytes).substr(0, 12345));
  hash.Update(std::string_view(bytes).substr(12345));
  EXPECT_EQ(hash.FinalHex(), FastHex(bytes));
  EXPECT_EQ(hash.FinalHex(), FastHex(""));
}

cache::EngineDigests Stored(std::string_view bytes) {
  cache::EngineHasher hasher;
  hasher.Update(bytes);
  return hasher.Final();
}

std::string Mismatch(const cache::EngineDigests& recorded, std::string_view bytes, uint64_t recorded_size) {
  cache::EngineHasher checker(recorded);
  checker.Update(bytes);
  return checker.Mismatch(bytes.size(), recorded_size);
}

TEST(EngineHasherTest, ChecksEveryByteAgainstTheRecordedDigests) {
  const cache::EngineDigests recorded = Stored("ENGINE-BYTES");
  EXPECT_EQ(recorded.sha256, HexOf(Sha256Of("ENGINE-BYTES")));
  EXPECT_EQ(recorded.fast, FastHex("ENGINE-BYTES"));
  EXPECT_EQ(recorded.fast_algorithm, FastHash::Algorithm());
  EXPECT_EQ(Mismatch(recorded, "ENGINE-BYTES", 12), "");
  EXPECT_NE(Mismatch(recorded, "ENGINE-BYTEZ", 12).find("not the ones stored"), std::string::npos);
  EXPECT_NE(Mismatch(recorded, "ENGINE-BYTE", 12).find("11 bytes, not the 12 stored"), std::string::npos);
  // An entry stored before the fast hash was kept (or by another platform's): SHA-256.
  const cache::EngineDigests older{recorded.sha256, "", ""};
  EXPECT_EQ(Mismatch(older, "ENGINE-BYTES", 12), "");
  EXPECT_NE(Mismatch(older, "ENGINE-BYTEZ", 12).find("SHA-256 differs"), std::string::npos);
  const cache::EngineDigests other{recorded.sha256, "00", "another-hash"};
  EXPECT_EQ(Mismatch(other, "ENGINE-BYTES", 12), "");
}

}  // namespace
}  // namespace trtwatch
