// The checks a request's head goes through before its body is read (service/http_request.h):
// framing, Host, Expect, the limits, Content-Type, the event stream's query.
#include <gtest/gtest.h>

#include <string>

#include "service/http_request.h"

namespace trtwatch::service {
namespace {

namespace http = boost::beast::http;

int FramingStatus(std::vector<std::string_view> transfer_encodings, bool content_length = false) {
  return CheckFraming(transfer_encodings, content_length).status;
}

TEST(HttpFramingTest, ChunkedAloneInAnyCaseIsTheBody) {
  EXPECT_EQ(FramingStatus({}), 0);
  EXPECT_EQ(FramingStatus({}, /*content_length=*/true), 0);
  EXPECT_EQ(FramingStatus({"chunked"}), 0);
  EXPECT_EQ(FramingStatus({"CHUNKED"}), 0);
  EXPECT_EQ(FramingStatus({" Chunked\t"}), 0);
  EXPECT_EQ(FramingStatus({", chunked ,"}), 0);  // empty list elements do not count (RFC 9110 §5.6.1)
}

TEST(HttpFramingTest, Rfc9112Section6_3FinalCodingNotChunkedIs400) {
  for (std::vector<std::string_view> te : std::vector<std::vector<std::string_view>>{
           {"identity"}, {"gzip"}, {"chunked, identity"}, {"chunked,identity"}, {"chunked", "identity"},
           {"chunked;x=1"}, {","}, {""}, {"chunked,   identity"} /* obs-fold, replaced by spaces */}) {
    EXPECT_EQ(FramingStatus(te), 400) << te.front();
  }
}

TEST(HttpFramingTest, Rfc9112Section7ChunkedTwiceIs400) {
  EXPECT_EQ(FramingStatus({"chunked, chunked"}), 400);
  EXPECT_EQ(FramingStatus({"chunked", "Chunked"}), 400);
  EXPECT_EQ(FramingStatus({"gzip, chunked, chunked"}), 400);
}

TEST(HttpFramingTest, Rfc9112Section6_1TransferEncodingWithContentLengthIs400) {
  EXPECT_EQ(FramingStatus({"chunked"}, /*content_length=*/true), 400);
  EXPECT_EQ(FramingStatus({"identity"}, /*content_length=*/true), 400);
}

TEST(HttpFramingTest, Rfc9112Section6_1UnknownCodingBeforeChunkedIs501) {
  EXPECT_EQ(FramingStatus({"gzip, chunked"}), 501);
  EXPECT_EQ(FramingStatus({"gzip", "chunked"}), 501);
  const HeadRefusal r = CheckFraming({"br, chunked"}, false);
  EXPECT_NE(r.message.find("\"br\""), std::string::npos) << r.message;
}

RequestHead GoodHead() {
  RequestHead head;
  head.hosts = {"127.0.0.1"};
  head.field_count = 1;
  head.target_size = 1;
  return head;
}

TEST(HttpHeadTest, Rfc9112Section3_2ExactlyOneHostInHttp11) {
  EXPECT_EQ(CheckHead(GoodHead()).status, 0);
  RequestHead none = GoodHead();
  none.hosts.clear();
  EXPECT_EQ(CheckHead(none).status, 400);
  none.version = 10;
  EXPECT_EQ(CheckHead(none).status, 0);
  RequestHead two = GoodHead();
  two.hosts.push_back("evil.example");
  EXPECT_EQ(CheckHead(two).status, 400);
}

TEST(HttpHeadTest, LimitsAnswer414And431) {
  RequestHead head = GoodHead();
  head.target_size = kTargetLimit;
  EXPECT_EQ(CheckHead(head).status, 0);
  head.target_size = kTargetLimit + 1;
  EXPECT_EQ(CheckHead(head).status, 414);
  head = GoodHead();
  head.field_count = kHeaderFieldLimit + 1;
  EXPECT_EQ(CheckHead(head).status, 431);
}

TEST(HttpHeadTest, OversizedHeadIs414WhenTheRequestLineIsTooLong) {
  EXPECT_EQ(OversizedHeadStatus(""), 414);  // the parser did not get past the request line
  EXPECT_EQ(OversizedHeadStatus("/?" + std::string(kTargetLimit, 'a')), 414);
  EXPECT_EQ(OversizedHeadStatus("/healthz"), 431);
}

TEST(HttpHeadTest, Rfc9110Section10_1_1OnlyHundredContinueIsExpected) {
  RequestHead head = GoodHead();
  EXPECT_FALSE(ExpectsContinue(head));
  head.expects = {"100-Continue"};
  EXPECT_EQ(CheckHead(head).status, 0);
  EXPECT_TRUE(ExpectsContinue(head));
  head.version = 10;  // cannot read an interim response
  EXPECT_FALSE(ExpectsContinue(head));
  head.expects = {"teapot"};
  EXPECT_EQ(CheckHead(head).status, 417);
}

TEST(HttpHeadTest, HeadOfCountsEveryLine) {
  http::request_header<> req;
  req.version(11);
  req.target("/builds?x=1");
  req.insert(http::field::host, "a");
  req.insert(http::field::host, "b");
  req.insert(http::field::transfer_encoding, "chunked");
  req.insert(http::field::transfer_encoding, "identity");
  req.insert(http::field::content_length, "3");
  req.insert(http::field::expect, "100-continue");
  const RequestHead head = HeadOf(req);
  EXPECT_EQ(head.version, 11u);
  EXPECT_EQ(head.target_size, 11u);
  EXPECT_EQ(head.field_count, 6u);
  EXPECT_EQ(head.hosts, (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(head.transfer_encodings, (std::vector<std::string_view>{"chunked", "identity"}));
  EXPECT_EQ(head.content_lengths.size(), 1u);
  EXPECT_EQ(head.expects.size(), 1u);
}

TEST(HttpContentTypeTest, Rfc9110Section8_3_1MediaTypeIsCaseInsensitiveWithParameters) {
  for (const char* ok : {"application/json", "Application/JSON", " application/json ; charset=utf-8",
                         "application/json;charset=UTF-8"}) {
    EXPECT_TRUE(IsJsonMediaType(ok)) << ok;
  }
  for (const char* bad : {"", "text/plain", "application/jsonx", "application/json-seq",
                          "application/x-www-form-urlencoded", "multipart/form-data; boundary=application/json"}) {
    EXPECT_FALSE(IsJsonMediaType(bad)) << bad;
  }
}

TEST(EventsQueryTest, OnlyCancelOnDisconnect) {
  bool cancel = false;
  std::string error;
  EXPECT_TRUE(ParseEventsQuery("/builds/b/events", &cancel, &error));
  EXPECT_FALSE(cancel);
  EXPECT_TRUE(ParseEventsQuery("/builds/b/events?cancel_on_disconnect=true", &cancel, &error));
  EXPECT_TRUE(cancel);
  EXPECT_FALSE(ParseEventsQuery("/builds/b/events?cancel_on_disconnect=maybe", &cancel, &error));
  EXPECT_FALSE(ParseEventsQuery("/builds/b/events?colour=red", &cancel, &error));
  EXPECT_NE(error.find("cancel_on_disconnect"), std::string::npos) << error;
}

}  // namespace
}  // namespace trtwatch::service
