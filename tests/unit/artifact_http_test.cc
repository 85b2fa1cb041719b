// The pure parts of downloading and uploading artifacts (service/http_request.h):
// byte ranges (RFC 9110 §14), entity-tag conditions (§13.1.2, §13.1.5), the upload's
// digest headers (RFC 9530 Content-Digest, X-Content-SHA256) and the routes.
#include <gtest/gtest.h>

#include <string>

#include "platform/sha256.h"
#include "service/http_request.h"
#include "service/route_table.h"

namespace trtwatch::service {
namespace {

using Kind = RangeRequest::Kind;

void ExpectPartial(std::string_view value, uint64_t size, uint64_t first, uint64_t last) {
  const RangeRequest r = ParseRange(value, size);
  EXPECT_EQ(r.kind, Kind::kPartial) << value;
  EXPECT_EQ(r.range.first, first) << value;
  EXPECT_EQ(r.range.last, last) << value;
}

TEST(ByteRangeTest, Rfc9110Section14_1_2FirstLastSuffixAndOpenEnded) {
  ExpectPartial("bytes=0-99", 1000, 0, 99);
  ExpectPartial("bytes=500-", 1000, 500, 999);
  ExpectPartial("bytes=-100", 1000, 900, 999);
  ExpectPartial("BYTES = 10-10", 1000, 10, 10);  // the unit is case-insensitive
  ExpectPartial("bytes= 7-8 ", 1000, 7, 8);      // OWS around the range
}

TEST(ByteRangeTest, Rfc9110Section14_1_2LastPastTheEndIsCutAndALongSuffixIsTheWhole) {
  ExpectPartial("bytes=900-5000", 1000, 900, 999);
  ExpectPartial("bytes=-5000", 1000, 0, 999);
  ExpectPartial("bytes=0-99999999999999999999999", 1000, 0, 999);  // saturates, never wraps
}

TEST(ByteRangeTest, Rfc9110Section14_1_1FirstPastTheEndOrAnEmptySuffixIsUnsatisfiable) {
  EXPECT_EQ(ParseRange("bytes=1000-", 1000).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(ParseRange("bytes=1000-2000", 1000).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(ParseRange("bytes=99999999999999999999999-", 1000).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(ParseRange("bytes=-0", 1000).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(ParseRange("bytes=0-0", 0).kind, Kind::kUnsatisfiable);  // nothing to select in an empty file
}

TEST(ByteRangeTest, Rfc9110Section14_2InvalidOrOtherUnitsAreIgnored) {
  for (std::string_view value : {"items=0-5", "bytes", "bytes=", "bytes=5-1", "bytes=a-b", "bytes=-", "bytes=1",
                                 "bytes=-1-2", "bytes=+1-2", "bytes=0x1-2", "=0-1"}) {
    EXPECT_EQ(ParseRange(value, 1000).kind, Kind::kWhole) << value;
  }
}

TEST(ByteRangeTest, Rfc9110Section14_2SeveralRangesAreAnsweredWhole) {
  EXPECT_EQ(ParseRange("bytes=0-1,5-6,10-20", 1000).kind, Kind::kWhole);
  EXPECT_EQ(ParseRange("bytes=0-1, -5", 1000).kind, Kind::kWhole);
  ExpectPartial("bytes=0-1,", 1000, 0, 1);  // an empty list element does not count (§5.6.1)
}

TEST(ByteRangeTest, Rfc9110Section14_4ContentRangeForms) {
  EXPECT_EQ(ContentRange({0, 99}, 1000), "bytes 0-99/1000");
  EXPECT_EQ(UnsatisfiedContentRange(1000), "bytes */1000");
}

TEST(EntityTagTest, Rfc9110Section13_1_2IfNoneMatchUsesTheWeakComparison) {
  const std::string etag = "\"abc\"";
  EXPECT_TRUE(IfNoneMatchMatches("\"abc\"", etag));
  EXPECT_TRUE(IfNoneMatchMatches("W/\"abc\"", etag));
  EXPECT_TRUE(IfNoneMatchMatches("\"x\", \"abc\"", etag));
  EXPECT_TRUE(IfNoneMatchMatches(" * ", etag));
  EXPECT_TRUE(IfNoneMatchMatches("\"a,b\", \"abc\"", etag));  // a comma inside a tag is part of it (§8.8.3)
  EXPECT_FALSE(IfNoneMatchMatches("\"abd\"", etag));
  EXPECT_FALSE(IfNoneMatchMatches("abc", etag));  // unquoted: malformed, no match
  EXPECT_FALSE(IfNoneMatchMatches("\"abc", etag));
  EXPECT_FALSE(IfNoneMatchMatches("\"a,b\"", "\"a\""));
}

TEST(EntityTagTest, Rfc9110Section13_1_5IfRangeNeedsTheSameStrongTag) {
  EXPECT_TRUE(IfRangeMatches(" \"abc\" ", "\"abc\""));
  EXPECT_FALSE(IfRangeMatches("W/\"abc\"", "\"abc\""));
  EXPECT_FALSE(IfRangeMatches("Wed, 21 Oct 2015 07:28:00 GMT", "\"abc\""));
}

TEST(Base64Test, Rfc4648Section10Vectors) {
  EXPECT_EQ(Base64Decode("").value(), "");
  EXPECT_EQ(Base64Decode("Zg==").value(), "f");
  EXPECT_EQ(Base64Decode("Zm8=").value(), "fo");
  EXPECT_EQ(Base64Decode("Zm9v").value(), "foo");
  EXPECT_EQ(Base64Decode("Zm9vYg").value(), "foob");  // padding optional (RFC 8941 §4.2.7)
  EXPECT_EQ(Base64Decode("Zm9vYmFy").value(), "foobar");
  EXPECT_FALSE(Base64Decode("Zm9v!"));
  EXPECT_FALSE(Base64Decode("Z"));
}

const char kAbcHex[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
const char kAbcBase64[] = "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=";

TEST(ExpectedDigestTest, Rfc9530Section2ContentDigestSha256) {
  const ExpectedDigest d = ExpectedSha256("sha-256=:" + std::string(kAbcBase64) + ":", std::nullopt);
  ASSERT_TRUE(d.error.empty()) << d.error;
  EXPECT_EQ(HexOf(*d.sha256), kAbcHex);
  // Other algorithms beside it are ignored (RFC 9530 §2).
  const ExpectedDigest two = ExpectedSha256("sha-512=:AAAA:, sha-256=:" + std::string(kAbcBase64) + ":", std::nullopt);
  EXPECT_EQ(HexOf(*two.sha256), kAbcHex);
}

TEST(ExpectedDigestTest, XContentSha256HexAndBothMustAgree) {
  EXPECT_EQ(HexOf(*ExpectedSha256(std::nullopt, kAbcHex).sha256), kAbcHex);
  const ExpectedDigest both = ExpectedSha256("sha-256=:" + std::string(kAbcBase64) + ":", kAbcHex);
  EXPECT_TRUE(both.error.empty());
  const std::string other(64, '0');
  EXPECT_NE(ExpectedSha256("sha-256=:" + std::string(kAbcBase64) + ":", other).error, "");
  EXPECT_FALSE(ExpectedSha256(std::nullopt, std::nullopt).sha256);
}

TEST(ExpectedDigestTest, MalformedDigestsNameTheFix) {
  for (std::string_view bad : {"sha-256=abc", "sha-256=:!!:", "sha-256=:AAAA:", "sha-512=:AAAA:", ""}) {
    const ExpectedDigest d = ExpectedSha256(bad, std::nullopt);
    EXPECT_FALSE(d.sha256) << bad;
    EXPECT_NE(d.error.find("RFC 9530"), std::string::npos) << bad << ": " << d.error;
  }
  EXPECT_NE(ExpectedSha256(std::nullopt, "xyz").error.find("64 hex digits"), std::string::npos);
}

TEST(ArtifactRouteTest, ModelAndBuildFileRoutes) {
  EXPECT_EQ(RouteOf("/models").endpoint, Endpoint::kModels);
  Route r = RouteOf("/models/resnet");
  EXPECT_EQ(r.endpoint, Endpoint::kModel);
  EXPECT_EQ(r.id, "resnet");
  r = RouteOf("/models/resnet/weights.bin");
  EXPECT_EQ(r.endpoint, Endpoint::kModelFile);
  EXPECT_EQ(r.file, "weights.bin");
  EXPECT_EQ(RouteOf("/models/a/b/c").endpoint, Endpoint::kNotFound);
  EXPECT_EQ(RouteOf("/builds/b_1/engine").endpoint, Endpoint::kBuildEngine);
  EXPECT_EQ(RouteOf("/builds/b_1/timing-cache").endpoint, Endpoint::kBuildTimingCache);
}

}  // namespace
}  // namespace trtwatch::service
