// Session: one MCP client connection's protocol state (lifecycle, version negotiation,
// requests in flight), independent of the transport.
//
// Lifecycle: `initialize` (the client's protocolVersion is answered with itself if
// supported, else with the latest this server speaks), then `notifications/initialized`;
// before `initialize` only `ping` is served. Protocol errors (parse error, invalid
// request, unknown method, unknown tool) are JSON-RPC errors; a tool that fails returns
// a result with isError. `notifications/cancelled` ends a request in flight without a
// response and cancels its build. From revision 2025-11-25, build_engine also runs as
// a task (mcp/tasks.h).
//
// Threading: the thread that runs the tools' event loop; `send` is called on it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "mcp/json_rpc.h"
#include "mcp/tasks.h"
#include "mcp/tools.h"

namespace trtwatch::mcp {

// The revisions this server speaks, newest first.
inline constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

// What the server tells the client's model about itself (initialize's instructions).
std::string Instructions();

struct ServerInfo {
  std::string version;       // trtwatch's
  std::string instructions;  // for the client's model
};

class Session {
 public:
  // `send(message, related)`: one message to the client; `related` is the id of the
  // request it belongs to (a response or a progress notification), null otherwise.
  using Send = std::function<void(const json& message, const json& related)>;
  // `caller`: who the session's client is (the service's user behind /mcp; nobody
  // known on stdio), for every build its tools submit or cancel.
  Session(Tools& tools, ServerInfo info, Send send, Caller caller = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // One received message (a line on stdio, a POST body on HTTP).
  void Receive(std::string_view text);
  void Receive(const Message& message);

  bool initialized() const { return !protocol_version_.empty(); }
  const std::string& protocol_version() const { return protocol_version_; }
  size_t in_flight() const { return in_flight_.size(); }

 private:
  void Request(const Message& m);
  void Notification(const Message& m);
  void CallTool(const Message& m);
  void TaskResult(const Message& m);
  // Registers a request that is answered later (tools/call, tasks/result); null when
  // its id is already in use by one in flight (an error was sent).
  std::shared_ptr<PendingCall> Pending(const Message& m, std::function<void(const ProgressReport&)> progress,
                                       std::function<json(json)> shape_result);
  json Initialize(const json& params);
  // Revisions before 2025-06-18 have no structured content, output schemas or titles.
  bool Structured() const { return protocol_version_ >= "2025-06-18"; }
  // Tasks came with 2025-11-25.
  bool TasksSupported() const { return protocol_version_ >= "2025-11-25"; }

  Tools& tools_;
  const Caller caller_;
  Tasks tasks_{tools_, caller_};
  const ServerInfo info_;
  const Send send_;
  std::string protocol_version_;  // empty until initialize
  std::map<std::string, std::shared_ptr<PendingCall>> in_flight_;  // IdKey -> tools/call, tasks/result
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);    // outlived by late callbacks
};

}  // namespace trtwatch::mcp
