// `trtwatch serve`: its command-line options and the run.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "app/run_serve.h"

namespace trtwatch {

// Adds the `serve` subcommand to `app`, parsing into `*options`.
CLI::App* AddServeCommand(CLI::App& app, service::ServerOptions* options, std::string* on_shutdown);

// Runs the service; returns the process exit code.
int RunServeCommand(service::ServerOptions options, const std::string& on_shutdown);

}  // namespace trtwatch
