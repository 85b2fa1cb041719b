// BuildsRoot: the objects `trtwatch serve` and `trtwatch mcp` both run on, assembled in
// one place — the record store, the counters, the build manager, and MCP's tools over
// them — and taken down in the one order that is safe (tools, manager, store).
//
// Threading: built, used and destroyed on the thread that runs `io`; `io` outlives it.
#pragma once

#include <memory>
#include <string>

#include "app/mcp_tools_config.h"
#include "builds/artifacts/artifact_store.h"
#include "builds/audit_log.h"
#include "builds/build_manager.h"
#include "builds/builds_config.h"
#include "builds/metrics.h"
#include "builds/stores/record_store.h"
#include "mcp/manager_builds.h"
#include "mcp/tools.h"

namespace trtwatch::app {

class BuildsRoot {
 public:
  struct Opening {
    std::unique_ptr<BuildsRoot> root;  // null when it could not be opened
    std::string error;                 // then: the problem and the fix
  };
  // Checks `config`, opens the store it names (refused while another process holds it,
  // or when its schema is newer than this binary's) and builds the rest on it, MCP's
  // tools told `tools`. Recovers nothing: that is `serve`'s to do.
  static Opening Open(boost::asio::io_context& io, const builds::BuildsConfig& config, const McpToolsConfig& tools = {});
  ~BuildsRoot();
  BuildsRoot(const BuildsRoot&) = delete;
  BuildsRoot& operator=(const BuildsRoot&) = delete;

  builds::RecordStore& store() { return *store_; }
  builds::Metrics& metrics() { return metrics_; }
  builds::AuditLog& audit() { return *audit_; }
  builds::BuildManager& manager() { return *manager_; }
  builds::ArtifactStore& artifacts() { return *artifacts_; }
  mcp::Tools& tools() { return *tools_; }

 private:
  BuildsRoot() = default;

  // Members in construction order; each depends only on those above it.
  std::unique_ptr<builds::RecordStore> store_;
  builds::Metrics metrics_;
  std::unique_ptr<builds::AuditLog> audit_;  // writes to store_, counts failures in metrics_
  std::unique_ptr<builds::ArtifactStore> artifacts_;
  std::unique_ptr<builds::BuildManager> manager_;
  std::unique_ptr<builds::BuildGroups> groups_;  // over manager_, which it attaches to
  std::unique_ptr<mcp::ManagerBuilds> builds_;
  std::unique_ptr<mcp::Tools> tools_;
};

}  // namespace trtwatch::app
