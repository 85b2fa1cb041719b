// The MCP session and its tools over a fake Builds: the protocol's answers, task
// states and cancellation, without a build manager, worker processes or sockets.
#include "mcp/session.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <map>
#include <vector>

namespace trtwatch::mcp {
namespace {

// Builds held in memory; the test moves them through their states.
class FakeBuilds : public Builds {
 public:
  struct Cancelled {
    std::string id, reason, message, by;
  };

  BuildsResult Submit(const json& request, const Caller& caller) override {
    const std::string id = "b_" + std::to_string(next_++);
    records_[id] = {{"id", id},
                    {"status", "queued"},
                    {"backend", "simulated"},
                    {"request", request},
                    {"submitted_by", caller.name},
                    {"created_at", "2026-11-30T12:00:00.000Z"}};
    return {Outcome::kOk, records_[id], ""};
  }
  BuildsResult Get(const std::string& id) override {
    auto it = records_.find(id);
    if (it == records_.end()) return {Outcome::kNotFound, json(), "no build \"" + id + "\""};
    return {Outcome::kOk, it->second, ""};
  }
  BuildsResult Cancel(const std::string& id, const std::string& reason, const std::string& message,
                      const std::string& by) override {
    auto it = records_.find(id);
    if (it == records_.end()) return {Outcome::kNotFound, json(), "no build \"" + id + "\""};
    cancels.push_back({id, reason, message, by});
    it->second["status"] = "cancelling";
    it->second["cancel"] = {{"reason", reason}, {"message", message}, {"requested_at", "2026-11-30T12:00:05.000Z"}};
    return {Outcome::kOk, it->second, ""};
  }
  std::vector<json> List(const std::vector<std::string>&, int) override {
    std::vector<json> all;
    for (auto it = records_.rbegin(); it != records_.rend(); ++it) all.push_back(it->second);
    return all;
  }
  std::unique_ptr<BuildWatch> Watch(const std::string& id, std::function<void()>, std::function<void()> on_end) override {
    if (!records_.count(id) || IsFinalStatus(records_[id]["status"].get<std::string>())) return nullptr;
    ends_[id].push_back(std::move(on_end));
    return std::make_unique<BuildWatch>();
  }

  // The build ends with `status`; the watchers hear of it.
  void End(const std::string& id, const std::string& status) {
    records_[id]["status"] = status;
    records_[id]["finished_at"] = "2026-11-30T12:01:00.000Z";
    for (auto& on_end : std::exchange(ends_[id], {})) on_end();
  }

  std::vector<Cancelled> cancels;

 private:
  std::map<std::string, json> records_;
  std::map<std::string, std::vector<std::function<void()>>> ends_;
  int next_ = 1;
};

// One session over fake builds, with what it sent.
struct Harness {
  explicit Harness(Caller caller = {})
      : tools_(io_, builds_, ToolOptions{}),
        session_(tools_, ServerInfo{"9.9.9", "instructions"}, [this](const json& m, const json&) { sent_.push_back(m); },
                 std::move(caller)) {}

  // Sends a request and returns what came back for it (null if nothing yet).
  json Request(const std::string& method, json params) {
    const int id = next_id_++;
    session_.Receive(json({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}).dump());
    return Answer(id);
  }
  json Answer(int id) const {
    for (const json& m : sent_) {
      if (m.contains("id") && m["id"] == id) return m;
    }
    return nullptr;
  }
  void Initialize(const char* version = "2025-11-25") {
    Request("initialize", {{"protocolVersion", version}, {"capabilities", json::object()}});
    session_.Receive(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  }

  boost::asio::io_context io_;
  FakeBuilds builds_;
  Tools tools_;
  std::vector<json> sent_;
  Session session_;
  int next_id_ = 1;
};

class McpSessionTest : public ::testing::Test, protected Harness {};

TEST_F(McpSessionTest, DeclaresTasksFrom2025_11_25Only) {
  Initialize();
  const json init = Answer(1)["result"];
  EXPECT_EQ(init["capabilities"]["tasks"]["requests"]["tools"]["call"], json::object());
  const json tools = Request("tools/list", json::object())["result"]["tools"];
  EXPECT_EQ(tools[0]["name"], "build_engine");
  EXPECT_EQ(tools[0]["execution"]["taskSupport"], "optional");

  Harness older;
  older.Initialize("2025-06-18");
  EXPECT_FALSE(older.Answer(1)["result"]["capabilities"].contains("tasks"));
  EXPECT_EQ(older.Request("tasks/get", {{"taskId", "b_1"}})["error"]["code"], rpc_error::kMethodNotFound);
}

TEST_F(McpSessionTest, ATaskIsTheBuildAndItsResultWaitsForTheEnd) {
  Initialize();
  const json created = Request("tools/call", {{"name", "build_engine"},
                                              {"arguments", {{"simulate", "small-cnn"}}},
                                              {"task", {{"ttl", 1000}}}});
  const json task = created["result"]["task"];
  ASSERT_EQ(task["taskId"], "b_1") << created;
  EXPECT_EQ(task["status"], "working");
  EXPECT_EQ(Request("tasks/get", {{"taskId", "b_1"}})["result"]["status"], "working");

  const int result_id = next_id_;
  EXPECT_TRUE(Request("tasks/result", {{"taskId", "b_1"}}).is_null());  // waits while the build runs
  builds_.End("b_1", "succeeded");
  const json result = Answer(result_id)["result"];
  EXPECT_EQ(result["isError"], false);
  EXPECT_EQ(result["structuredContent"]["status"], "succeeded");
  EXPECT_EQ(result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], "b_1");
  const json done = Request("tasks/get", {{"taskId", "b_1"}})["result"];
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["lastUpdatedAt"], "2026-11-30T12:01:00.000Z");
  EXPECT_FALSE(done.contains("pollInterval"));
  EXPECT_EQ(Request("tasks/cancel", {{"taskId", "b_1"}})["error"]["code"], rpc_error::kInvalidParams);
  EXPECT_TRUE(builds_.cancels.empty());
}

TEST_F(McpSessionTest, TaskCancelCancelsTheBuildAndAFailedBuildIsAFailedTask) {
  Initialize();
  Request("tools/call", {{"name", "build_engine"}, {"arguments", {{"simulate", "small-cnn"}}}, {"task", json::object()}});
  const json cancelled = Request("tasks/cancel", {{"taskId", "b_1"}})["result"];
  EXPECT_EQ(cancelled["status"], "cancelled");  // at once, as the revision requires
  ASSERT_EQ(builds_.cancels.size(), 1u);
  EXPECT_EQ(builds_.cancels[0].reason, "api");
  EXPECT_NE(builds_.cancels[0].message.find("tasks/cancel"), std::string::npos);

  Request("tools/call", {{"name", "build_engine"}, {"arguments", {{"simulate", "failing"}}}, {"task", json::object()}});
  builds_.End("b_2", "failed");
  EXPECT_EQ(Request("tasks/get", {{"taskId", "b_2"}})["result"]["status"], "failed");
  EXPECT_EQ(Request("tasks/result", {{"taskId", "b_2"}})["result"]["isError"], true);
  EXPECT_EQ(Request("tasks/list", json::object())["result"]["tasks"].size(), 2u);
}

TEST_F(McpSessionTest, TaskRequestsThatCannotBeAnswered) {
  Initialize();
  EXPECT_EQ(Request("tasks/get", {{"taskId", "b_404"}})["error"]["code"], rpc_error::kInvalidParams);
  EXPECT_EQ(Request("tasks/result", {{"taskId", 7}})["error"]["code"], rpc_error::kInvalidParams);
  const json forbidden = Request("tools/call", {{"name", "get_build"}, {"arguments", {{"id", "b_1"}}}, {"task", json::object()}});
  EXPECT_EQ(forbidden["error"]["code"], rpc_error::kMethodNotFound);
  const json bad = Request("tools/call", {{"name", "build_engine"}, {"arguments", {{"timout", "1s"}}}, {"task", json::object()}});
  EXPECT_EQ(bad["error"]["code"], rpc_error::kInvalidParams);
  EXPECT_NE(bad["error"]["message"].get<std::string>().find("unknown argument \"timout\""), std::string::npos);
}

TEST_F(McpSessionTest, CancellingAWaitingCallCancelsItsBuildAndSendsNothing) {
  Initialize();
  const int id = next_id_;
  EXPECT_TRUE(Request("tools/call", {{"name", "build_engine"}, {"arguments", {{"simulate", "small-cnn"}}}}).is_null());
  session_.Receive(json({{"jsonrpc", "2.0"},
                         {"method", "notifications/cancelled"},
                         {"params", {{"requestId", id}, {"reason", "changed my mind"}}}})
                       .dump());
  ASSERT_EQ(builds_.cancels.size(), 1u);
  EXPECT_EQ(builds_.cancels[0].message, "cancelled by the MCP client (changed my mind)");
  builds_.End("b_1", "cancelled");
  EXPECT_TRUE(Answer(id).is_null());  // a cancelled request gets no response
  EXPECT_EQ(session_.in_flight(), 0u);

  // Cancelling a tasks/result wait stops the wait, not the build.
  Request("tools/call", {{"name", "build_engine"}, {"arguments", {{"simulate", "small-cnn"}}}, {"task", json::object()}});
  const int wait_id = next_id_;
  Request("tasks/result", {{"taskId", "b_2"}});
  session_.Receive(json({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", wait_id}}}}).dump());
  EXPECT_EQ(builds_.cancels.size(), 1u);
  EXPECT_EQ(session_.in_flight(), 0u);
}

// With users (the service's /mcp), each build names who submitted it, and a builder's
// cancel_build or tasks/cancel of another's build is refused, naming the owner; an
// admin's is not.
TEST(McpCallerTest, BuildsNameTheirCallerAndOnlyTheirOwnAreCancelledByABuilder) {
  Harness bo(Caller{"bo", false});
  bo.Initialize();
  const json own = bo.Request("tools/call", {{"name", "build_engine"},
                                             {"arguments", {{"simulate", "small-cnn"}, {"wait", false}}}});
  EXPECT_EQ(own["result"]["structuredContent"]["submitted_by"], "bo") << own;
  const std::string others = bo.builds_.Submit({{"simulate", "small-cnn"}}, Caller{"ana", false}).record["id"];

  const json refused = bo.Request("tools/call", {{"name", "cancel_build"}, {"arguments", {{"id", others}}}});
  EXPECT_EQ(refused["result"]["isError"], true);
  EXPECT_NE(refused["result"]["content"][0]["text"].get<std::string>().find(
                "was submitted by ana; bo may cancel only their own builds"),
            std::string::npos)
      << refused;
  EXPECT_EQ(bo.Request("tasks/cancel", {{"taskId", others}})["error"]["code"], rpc_error::kInvalidParams);
  EXPECT_TRUE(bo.builds_.cancels.empty());

  const json cancelled = bo.Request("tools/call", {{"name", "cancel_build"}, {"arguments", {{"id", "b_1"}}}});
  EXPECT_EQ(cancelled["result"]["isError"], false) << cancelled;
  ASSERT_EQ(bo.builds_.cancels.size(), 1u);
  EXPECT_EQ(bo.builds_.cancels[0].by, "bo");

  Harness ada(Caller{"ada", true});
  ada.Initialize();
  const std::string anas = ada.builds_.Submit({{"simulate", "small-cnn"}}, Caller{"ana", false}).record["id"];
  EXPECT_EQ(ada.Request("tools/call", {{"name", "cancel_build"}, {"arguments", {{"id", anas}}}})["result"]["isError"],
            false);
  ASSERT_EQ(ada.builds_.cancels.size(), 1u);
  EXPECT_EQ(ada.builds_.cancels[0].by, "ada");
}

}  // namespace
}  // namespace trtwatch::mcp
