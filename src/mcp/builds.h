// Builds: what the MCP tools need from the builds layer's manager, as typed outcomes
// the tools map to MCP results. ManagerBuilds (manager_builds.h) is the real one, over
// builds::BuildManager and its RecordStore, so that builds an agent starts are the
// service's builds (REST API, dashboard, records) and the other way round.
//
// Threading: every call on the thread of the event loop the builds run on; callbacks
// come on that thread too.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace trtwatch::mcp {

enum class Outcome {
  kOk,               // `record` is the build's record
  kBadRequest,       // the request is invalid: `error` names the problem and the fix
  kBusy,             // queue full, or the service is stopping: try later
  kNotFound,         // no build with that id
  kAlreadyFinished,  // nothing to cancel: `record` is the final record
  kForbidden,        // another's build, and the caller may not cancel it (Caller)
  kStorageError,     // the record store failed
};

// Who calls the tools: the service's user behind /mcp, whose name goes into the records
// (submitted_by, cancelled_by) and the audit trail; or nobody known (stdio, a service
// that asks for no credentials, the server's own budget). Only those with
// `cancels_any` may cancel builds that others submitted.
struct Caller {
  std::string name;         // empty: no credentials asked for
  bool cancels_any = true;  // an admin, or nobody known
};

struct BuildsResult {
  Outcome outcome = Outcome::kOk;
  nlohmann::json record;  // the build's record document, when there is one
  std::string error;
};

// While it lives, a build's events are watched. Destroying it stops the callbacks.
class BuildWatch {
 public:
  virtual ~BuildWatch() = default;
};

class Builds {
 public:
  virtual ~Builds() = default;
  // `request` is a build request as POST /builds takes it; `caller` submits it.
  virtual BuildsResult Submit(const nlohmann::json& request, const Caller& caller) = 0;
  // `request` has "targets": one build per GPU type, as a group (POST /builds with
  // "targets"); `record` is the group's document. Refused where groups are not served.
  virtual BuildsResult SubmitGroup(const nlohmann::json& request, const Caller& caller) {
    (void)request;
    (void)caller;
    return {Outcome::kBadRequest, nullptr, "build groups (\"targets\") are not available here"};
  }
  virtual BuildsResult Get(const std::string& id) = 0;
  // Cancels cooperatively (queued: at once), keeping `reason` ("api", "budget"),
  // `message` and who asked (`by`, empty: the server) in the record. Idempotent.
  virtual BuildsResult Cancel(const std::string& id, const std::string& reason, const std::string& message,
                              const std::string& by) = 0;
  // Newest first; `statuses` empty means all.
  virtual std::vector<nlohmann::json> List(const std::vector<std::string>& statuses, int limit) = 0;
  // Calls `on_event` for each new event of build `id` and `on_end` once its stream is
  // over (or the service stops). Null if the build is not live (unknown, or over: read
  // its record with Get). A callback may destroy the watch it was called from.
  virtual std::unique_ptr<BuildWatch> Watch(const std::string& id, std::function<void()> on_event,
                                            std::function<void()> on_end) = 0;
};

}  // namespace trtwatch::mcp
