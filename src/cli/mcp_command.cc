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
  cmd->add_option("--data-dir", options->builds.data_dir,
                  "Where records and event logs are kept, by one process at a time; a trtwatch serve started on "
                  "it later shows the builds in its API and dashboard "
                  "(default: $XDG_STATE_HOME/trtwatch or ~/.local/state/trtwatch)");
  AddStorageFlags(cmd, &options->builds);
  cmd->add_option("--max-concurrent", options->builds.max_concurrent, "Builds running at once; more wait in a queue")
      ->default_val(2);
  cmd->add_option("--queue-limit", options->builds.queue_limit, "Builds that may wait")->default_val(100);
  AddReplicaFlags(cmd, &options->builds);
  cmd->add_option("--max-build-time", options->max_build_time,
                  "Budget of every build (90s, 30m, 2h): a build running longer is cancelled with reason budget");
  return cmd;
}

int RunMcpCommand(const McpCommandOptions& options) {
  builds::BuildsConfig config = options.builds;
  if (config.data_dir.empty()) {
    config.data_dir = DefaultMcpDataDir();
    std::error_code ec;
    std::filesystem::create_directories(config.data_dir, ec);  // ~/.local/state may not exist yet
  }
  double max_build_seconds = 0;
  if (!options.max_build_time.empty()) {
    std::string error;
    if (!ParseDuration(options.max_build_time, &max_build_seconds, &error)) {
      std::fprintf(stderr, "trtwatch mcp: --max-build-time: %s\n", error.c_str());
      return exit_code::kUsage;
    }
  }
  const auto doctor = [] { return nlohmann::json::parse(FormatDoctorJson(GatherDoctorReport())); };
  return app::RunMcp(config, {max_build_seconds, doctor}, TRTWATCH_VERSION);
}

}  // namespace trtwatch
