// The digest on what leaves (service/repr_digest.h): Repr-Digest's value (RFC 9530 §3,
// a Structured Fields byte sequence, RFC 8941 §3.3.5, of standard base64, RFC 4648 §4)
// and Want-Repr-Digest's preference (RFC 9530 §4).
#include <gtest/gtest.h>

#include <string>

#include "service/repr_digest.h"

namespace trtwatch::service {
namespace {

TEST(ReprDigestTest, Base64IsRfc4648WithPadding) {  // RFC 4648 §10's test vectors
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode(std::string("\xff\xfe\x00", 3)), "//4A");
}

TEST(ReprDigestTest, Sha256OfBytesAndOfHexAgree) {
  // RFC 9530 Appendix B: {"hello": "world"} has sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:
  const std::string body = "{\"hello\": \"world\"}";
  EXPECT_EQ(ReprDigestOfBytes(body), "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:");
  EXPECT_EQ(ReprDigestOfHex("5f8f04f6a3a892aaabbddb6cf273894493773960d4a325b105fee46eef4304f1"),
            ReprDigestOfBytes(body));
  EXPECT_EQ(ReprDigestOfHex("5F8F04F6A3A892AAABBDDB6CF273894493773960D4A325B105FEE46EEF4304F1"),
            ReprDigestOfBytes(body));
  EXPECT_EQ(ReprDigestOfHex(""), "");
  EXPECT_EQ(ReprDigestOfHex("5f8f"), "");
  EXPECT_EQ(ReprDigestOfHex(std::string(64, 'g')), "");
}

TEST(ReprDigestTest, WantReprDigestRefusesSha256OnlyWithWeightZero) {  // RFC 9530 §4
  EXPECT_TRUE(WantsSha256ReprDigest(""));
  EXPECT_TRUE(WantsSha256ReprDigest("sha-256=10"));
  EXPECT_TRUE(WantsSha256ReprDigest("sha-512=3, sha-256=1"));
  EXPECT_TRUE(WantsSha256ReprDigest("sha-512=10"));  // none of ours asked for: ours is sent
  EXPECT_TRUE(WantsSha256ReprDigest("sha-256"));
  EXPECT_FALSE(WantsSha256ReprDigest("sha-256=0"));
  EXPECT_FALSE(WantsSha256ReprDigest("sha-512=5,  sha-256 = 0 "));
}

}  // namespace
}  // namespace trtwatch::service
