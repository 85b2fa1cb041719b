// Tasks: MCP's task-augmented tools/call (revision 2025-11-25, experimental there) for
// build_engine, and tasks/get, tasks/result, tasks/cancel, tasks/list.
//
// A task is a build: its taskId is the build's id and its state is read from the
// build's record each time, so a task outlives the session that started it. An agent
// can start a build as a task, disconnect, and ask any later session of the same
// server (stdio or HTTP, same data directory) how it went.
//
// Status: queued/running -> working; succeeded -> completed; failed, timed_out,
// interrupted -> failed (a tool result with isError, as the revision says); cancelled
// and cancelling -> cancelled (tasks/cancel must answer with a cancelled task; the
// build itself stops at TensorRT's next step, and tasks/result waits for its final
// record). statusMessage is the record's one-line summary, with the phase while it
// runs: polling tasks/get is how a task reports progress.
//
// Threading: the thread that runs the tools' event loop.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "mcp/tools.h"

namespace trtwatch::mcp {

// What a tasks/* request gets: a result, or a JSON-RPC error.
struct TaskAnswer {
  json result;
  int error_code = 0;  // 0: `result` is the answer
  std::string error;
};

class Tasks {
 public:
  // `caller`: the session's, who submits and cancels its tasks' builds.
  Tasks(Tools& tools, Caller caller) : tools_(tools), caller_(std::move(caller)) {}

  // A task-augmented tools/call of build_engine: submits the build, answers with the
  // CreateTaskResult at once.
  TaskAnswer Create(const json& arguments);
  TaskAnswer Get(const json& params);
  TaskAnswer Cancel(const json& params);
  TaskAnswer List(const json& params);
  // tasks/result: the task's CallToolResult, when the task is over (at once if it is),
  // through `call`; or an error answer at once (unknown task).
  TaskAnswer Result(const json& params, const std::shared_ptr<PendingCall>& call);

  static bool SupportsTask(const std::string& tool_name) { return tool_name == "build_engine"; }

 private:
  // The task's build record, or an error answer for a bad or unknown taskId.
  bool Find(const json& params, json* record, TaskAnswer* error);

  Tools& tools_;
  const Caller caller_;
};

// The MCP Task object for a build record.
json TaskOf(const json& record);

// `_meta` that ties a message to task `id`.
json RelatedTaskMeta(const std::string& id);

}  // namespace trtwatch::mcp
