// ManagerBuilds: mcp::Builds over the builds layer's BuildManager and RecordStore: the
// one place where the MCP server meets the builds layer's types.
//
// Threading: as BuildManager, the thread that runs its io_context only.
#pragma once

#include "mcp/builds.h"

namespace trtwatch::builds {
class AuditLog;
class BuildManager;
class RecordStore;
}  // namespace trtwatch::builds

namespace trtwatch::mcp {

class ManagerBuilds final : public Builds {
 public:
  // Submits and cancels that took are written to `audit` (builds/audit_log.h).
  ManagerBuilds(builds::BuildManager& manager, builds::RecordStore& store, builds::AuditLog& audit)
      : manager_(manager), store_(store), audit_(audit) {}

  BuildsResult Submit(const nlohmann::json& request, const Caller& caller) override;
  BuildsResult SubmitGroup(const nlohmann::json& request, const Caller& caller) override;
  BuildsResult Get(const std::string& id) override;
  BuildsResult Cancel(const std::string& id, const std::string& reason, const std::string& message,
                      const std::string& by) override;
  std::vector<nlohmann::json> List(const std::vector<std::string>& statuses, int limit) override;
  std::unique_ptr<BuildWatch> Watch(const std::string& id, std::function<void()> on_event,
                                    std::function<void()> on_end) override;

 private:
  builds::BuildManager& manager_;
  builds::RecordStore& store_;
  builds::AuditLog& audit_;
};

}  // namespace trtwatch::mcp
