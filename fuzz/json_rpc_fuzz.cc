// MCP's JSON-RPC messages: each line of the input is one message, read by ParseMessage
// and handled by a Session over the real tools, whose builds are a fake that checks
// build requests with the service's own parser. An input whose first byte is odd talks
// to a session initialized already, so that the tools are reached.
// Properties: every message sent is JSON-RPC 2.0 the transports can serialize; each
// request gets exactly one response, with its id; a notification gets none; an invalid
// message gets one error response.
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "mcp/builds.h"
#include "mcp/json_rpc.h"
#include "mcp/session.h"
#include "mcp/tools.h"
#include "builds/build_request.h"

using nlohmann::json;
using namespace trtwatch::mcp;

namespace {

// Accepts what the service would accept; the build then ends at once (or stays queued).
class FakeBuilds final : public Builds {
 public:
  BuildsResult Submit(const json& request, const Caller&) override {
    static const trtwatch::builds::RequestPaths paths = {{"/nonexistent-trtwatch-fuzz-models"},
                                                          "/nonexistent-trtwatch-fuzz-data"};
    const trtwatch::Result<trtwatch::builds::BuildRequest> result =
        trtwatch::builds::ParseBuildRequest(trtwatch::JsonBody{trtwatch::JsonBody::Outcome::kOk, request, ""}, paths);
    if (!result.ok()) {
      FUZZ_CHECK(!result.error().empty());
      return {Outcome::kBadRequest, nullptr, result.error()};
    }
    const trtwatch::builds::BuildRequest& parsed = *result;
    static const char* const kEnds[] = {"succeeded", "queued", "failed", "cancelled"};
    const std::string id = "b_" + std::string(30, '0') + std::to_string(10 + records_.size() % 90);
    json record = {{"id", id},
                   {"status", kEnds[parsed.seed % 4]},
                   {"backend", parsed.simulate.empty() ? "tensorrt" : "simulated"},
                   {"request", json::parse(parsed.json, nullptr, false)},
                   {"phases", json::array()}};
    records_[id] = record;
    return {Outcome::kOk, record, ""};
  }
  BuildsResult Get(const std::string& id) override {
    auto it = records_.find(id);
    if (it == records_.end()) return {Outcome::kNotFound, nullptr, "no build \"" + id + "\""};
    return {Outcome::kOk, it->second, ""};
  }
  BuildsResult Cancel(const std::string& id, const std::string&, const std::string&, const std::string&) override {
    auto it = records_.find(id);
    if (it == records_.end()) return {Outcome::kNotFound, nullptr, "no build \"" + id + "\""};
    if (it->second["status"] != "queued") return {Outcome::kAlreadyFinished, it->second, "already finished"};
    it->second["status"] = "cancelled";
    return {Outcome::kOk, it->second, ""};
  }
  std::vector<json> List(const std::vector<std::string>& statuses, int limit) override {
    std::vector<json> out;
    for (const auto& [id, record] : records_) {
      bool wanted = statuses.empty();
      for (const std::string& s : statuses) wanted = wanted || record["status"] == s;
      if (wanted && static_cast<int>(out.size()) < limit) out.push_back(record);
    }
    return out;
  }
  std::unique_ptr<BuildWatch> Watch(const std::string&, std::function<void()>, std::function<void()>) override {
    return nullptr;  // not live: a waiting call reads the record at once
  }

 private:
  std::map<std::string, json> records_;
};

void CheckSent(const json& message, const json& related) {
  FUZZ_CHECK(message.is_object());
  FUZZ_CHECK(message.value("jsonrpc", "") == "2.0");
  FUZZ_CHECK(!message.dump(-1, ' ', false, json::error_handler_t::replace).empty());
  if (message.contains("method")) {
    FUZZ_CHECK(message["method"].is_string() && !message.contains("id"));
    return;
  }
  FUZZ_CHECK(message.contains("id") && message["id"] == related);
  FUZZ_CHECK(message.contains("result") != message.contains("error"));
  if (message.contains("error")) {
    const json& e = message["error"];
    FUZZ_CHECK(e["code"].is_number_integer() && e["message"].is_string() && !e["message"].get<std::string>().empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  boost::asio::io_context io;
  FakeBuilds builds;
  ToolOptions options;
  options.doctor = [] { return json{{"tensorrt", nullptr}}; };
  Tools tools(io, builds, options);
  std::vector<json> responses;  // to the current message
  Session session(tools, ServerInfo{"0.0.0-fuzz", Instructions()}, [&](const json& message, const json& related) {
    CheckSent(message, related);
    if (!message.contains("method")) responses.push_back(message["id"]);
  });
  if (data[0] % 2 == 1) {
    session.Receive(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})");
    FUZZ_CHECK(session.initialized());
  }
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (int lines = 0; lines < 64 && !rest.empty(); ++lines) {
    const size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    const Message m = ParseMessage(line);
    responses.clear();
    session.Receive(m);
    switch (m.kind) {
      case Message::Kind::kRequest:
        FUZZ_CHECK(responses.size() == 1 && responses[0] == m.id);
        break;
      case Message::Kind::kInvalid:
        FUZZ_CHECK(responses.size() == 1);
        break;
      case Message::Kind::kNotification:
      case Message::Kind::kResponse:
        FUZZ_CHECK(responses.empty());
        break;
    }
  }
  FUZZ_CHECK(session.in_flight() == 0);  // every call ended: the fake's builds never run
  tools.Stop();
  return 0;
}
