#include "cli/mcp_command.h"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include <trtwatch/result.h>
#include "cli/doctor_command.h"
#include "cli/replica_flags.h"
#include "cli/storage_flags.h"
#include "app/run_mcp.h"
#include "platform/state_folder.h"
#include "runner/duration.h"
#include "runner/output_mode.h"

#ifndef TRTWATCH_VERSION
#define TRTWATCH_VERSION "0.0.0"
#endif

namespace trtwatch {

std::string DefaultMcpDataDir() {
  const StateFolder folder = UserStateFolder(ProcessEnvironment());
  return folder.path.empty() ? "trtwatch-data" : folder.path;
}

CLI::App* AddMcpCommand(CLI::App& app, McpCommandOptions* options) {
  CLI::App* cmd = app.add_subcommand(
      "mcp", "Serve the Model Context Protocol on stdio: build tools for AI agents, with progress and cancellation");
  cmd->add_option("--data-dir", options->data_dir,
                  "Where records and event logs are kept, by one process at a time; a trtwatch serve started on "
                  "it later shows the builds in its API and dashboard "
                  "(default: $XDG_STATE_HOME/trtwatch or ~/.local/state/trtwatch)");
  AddStorageFlags(cmd, {&options->store, &options->model_roots, &options->artifact_dir});
  cmd->add_option("--max-concurrent", options->max_concurrent, "Builds running at once; more wait in a queue")
      ->default_val(2);
  cmd->add_option("--queue-limit", options->queue_limit, "Builds that may wait")->default_val(100);
  AddReplicaFlags(cmd, &options->replica, &options->lease_seconds);
  cmd->add_option("--max-build-time", options->max_build_time,
                  "Budget of every build (90s, 30m, 2h): a build running longer is cancelled with reason budget");
  return cmd;
}

int RunMcpCommand(const McpCommandOptions& options) {
  app::BuildsConfig o;
  o.data_dir = options.data_dir.empty() ? DefaultMcpDataDir() : options.data_dir;
  o.artifact_dir = options.artifact_dir;
  if (options.data_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.data_dir, ec);  // ~/.local/state may not exist yet
  }
  o.store = options.store;
  o.model_roots = options.model_roots;
  o.max_concurrent = options.max_concurrent;
  o.queue_limit = options.queue_limit;
  o.replica = options.replica;
  o.lease_seconds = options.lease_seconds;
  if (!options.max_build_time.empty()) {
    std::string error;
    if (!ParseDuration(options.max_build_time, &o.max_build_seconds, &error)) {
      std::fprintf(stderr, "trtwatch mcp: --max-build-time: %s\n", error.c_str());
      return exit_code::kUsage;
    }
  }
  o.doctor = [] { return nlohmann::json::parse(FormatDoctorJson(GatherDoctorReport())); };
  return app::RunMcp(o, TRTWATCH_VERSION);
}

}  // namespace trtwatch
