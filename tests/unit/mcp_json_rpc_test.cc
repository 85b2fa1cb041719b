#include "mcp/json_rpc.h"

#include <gtest/gtest.h>

namespace trtwatch::mcp {
namespace {

int ErrorCode(const Message& m) { return m.error_response["error"]["code"].get<int>(); }

TEST(McpJsonRpc, ClassifiesRequestsNotificationsAndResponses) {
  Message r = ParseMessage(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}})");
  EXPECT_EQ(r.kind, Message::Kind::kRequest);
  EXPECT_EQ(r.id, 7);
  EXPECT_EQ(r.method, "tools/list");
  EXPECT_EQ(r.params["cursor"], "x");

  Message s = ParseMessage(R"({"jsonrpc":"2.0","id":"abc","method":"ping"})");
  EXPECT_EQ(s.kind, Message::Kind::kRequest);
  EXPECT_EQ(s.id, "abc");
  EXPECT_TRUE(s.params.is_object() && s.params.empty());

  Message n = ParseMessage(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}})");
  EXPECT_EQ(n.kind, Message::Kind::kNotification);
  EXPECT_TRUE(n.id.is_null());

  EXPECT_EQ(ParseMessage(R"({"jsonrpc":"2.0","id":1,"result":{}})").kind, Message::Kind::kResponse);
  EXPECT_EQ(ParseMessage(R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}})").kind,
            Message::Kind::kResponse);
}

TEST(McpJsonRpc, MalformedTextIsAParseErrorWithNullId) {
  for (const char* text : {"", "{", "{\"jsonrpc\":\"2.0\",", "nul", "{\"a\":\"\xff\"}"}) {
    Message m = ParseMessage(text);
    EXPECT_EQ(m.kind, Message::Kind::kInvalid) << text;
    EXPECT_EQ(ErrorCode(m), rpc_error::kParseError) << text;
    EXPECT_TRUE(m.error_response["id"].is_null());
    EXPECT_EQ(m.error_response["jsonrpc"], "2.0");
  }
}

TEST(McpJsonRpc, InvalidRequestsKeepTheirIdWhenItIsReadable) {
  struct Case {
    const char* text;
    int code;
    json id;
  };
  const Case cases[] = {
      {R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", rpc_error::kInvalidRequest, nullptr},
      {R"(42)", rpc_error::kInvalidRequest, nullptr},
      {R"({"id":4,"method":"ping"})", rpc_error::kInvalidRequest, 4},
      {R"({"jsonrpc":"1.0","id":4,"method":"ping"})", rpc_error::kInvalidRequest, 4},
      {R"({"jsonrpc":"2.0","id":null,"method":"ping"})", rpc_error::kInvalidRequest, nullptr},
      {R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})", rpc_error::kInvalidRequest, nullptr},
      {R"({"jsonrpc":"2.0","id":2.5,"method":"ping"})", rpc_error::kInvalidRequest, nullptr},
      {R"({"jsonrpc":"2.0","id":"x","method":3})", rpc_error::kInvalidRequest, "x"},
      {R"({"jsonrpc":"2.0","id":"x"})", rpc_error::kInvalidRequest, "x"},
      {R"({"jsonrpc":"2.0","id":5,"method":"ping","params":[1,2]})", rpc_error::kInvalidParams, 5},
      {R"({"jsonrpc":"2.0","method":"ping","params":"p"})", rpc_error::kInvalidParams, nullptr},
  };
  for (const Case& c : cases) {
    Message m = ParseMessage(c.text);
    ASSERT_EQ(m.kind, Message::Kind::kInvalid) << c.text;
    EXPECT_EQ(ErrorCode(m), c.code) << c.text;
    EXPECT_EQ(m.error_response["id"], c.id) << c.text;
    EXPECT_FALSE(m.error_response["error"]["message"].get<std::string>().empty());
  }
}

// Issue 22, RFC 8259 section 4: names within an object should be unique. A message
// naming a key twice ("method" of a request, "reason" of a cancel) is refused, not read last-wins.
TEST(McpJsonRpc, DuplicateKeysAreAnInvalidRequestNamingTheKey) {
  for (const char* text : {R"({"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"})",
                           R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"a","reason":"b"}})"}) {
    const Message m = ParseMessage(text);
    EXPECT_EQ(m.kind, Message::Kind::kInvalid) << text;
    EXPECT_EQ(m.error_response["error"]["code"], rpc_error::kInvalidRequest) << text;
    EXPECT_NE(m.error_response["error"]["message"].get<std::string>().find("duplicate key"), std::string::npos);
  }
}

TEST(McpJsonRpc, BuildsResponsesAndNotifications) {
  EXPECT_EQ(ResultResponse(3, {{"a", 1}}).dump(), R"({"id":3,"jsonrpc":"2.0","result":{"a":1}})");
  EXPECT_EQ(ErrorResponse("r", rpc_error::kMethodNotFound, "no").dump(),
            R"({"error":{"code":-32601,"message":"no"},"id":"r","jsonrpc":"2.0"})");
  EXPECT_EQ(NotificationMessage("notifications/progress", {{"progress", 1}}).dump(),
            R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}})");
}

TEST(McpJsonRpc, IdKeysTellStringsFromNumbers) {
  EXPECT_NE(IdKey(json(1)), IdKey(json("1")));
  EXPECT_EQ(IdKey(json(1)), IdKey(ParseMessage(R"({"jsonrpc":"2.0","id":1,"method":"m"})").id));
}

}  // namespace
}  // namespace trtwatch::mcp
