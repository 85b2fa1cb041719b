#include "cli/serve_command.h"

#include <cstdio>

#include <trtwatch/result.h>

#include "cli/doctor_command.h"
#include "runner/duration.h"
#include "service/build_request.h"

#ifndef TRTWATCH_VERSION
#define TRTWATCH_VERSION "0.0.0"
#endif

namespace trtwatch {

CLI::App* AddServeCommand(CLI::App& app, service::ServerOptions* options, std::string* on_shutdown) {
  CLI::App* cmd = app.add_subcommand("serve", "Run the build service: REST API, live Server-Sent Events, records, metrics");
  cmd->add_option("--listen", options->listen, "HOST:PORT to listen on (port 0 picks a free one)")
      ->default_val("127.0.0.1:8470");
  cmd->add_option("--data-dir", options->data_dir, "Where records (SQLite), event logs and engines are kept")
      ->default_val("trtwatch-data");
  cmd->add_option("--model-root", options->model_roots, "Folder whose models may be built (repeatable)");
  cmd->add_option("--token-file", options->token_file,
                  "File holding the bearer token clients must send (required for a non-loopback --listen)");
  cmd->add_option("--max-concurrent", options->max_concurrent, "Builds running at once; more wait in a queue")
      ->default_val(2);
  cmd->add_option("--queue-limit", options->queue_limit, "Builds that may wait; beyond it POST /builds gets 429")
      ->default_val(100);
  cmd->add_option("--max-connections", options->max_connections,
                  "Open connections at most (0: what the descriptor limit allows); more get 503")
      ->default_val(0);
  cmd->add_option("--max-sse-clients", options->max_sse_clients,
                  "Open event streams at most (0: as many as connections); more get 429")
      ->default_val(0);
  cmd->add_option("--io-threads", options->io_threads,
                  "Threads writing event streams (0: one per core beyond the builds' thread, at most 16)")
      ->default_val(0)
      ->check(CLI::Range(0, 256));
  cmd->add_option("--cancel-grace", options->cancel_grace_text,
                  "How long a cancelled build's worker may take to stop before SIGKILL (e.g. 10s, 2m)")
      ->default_val("10s");
  cmd->add_option("--allow-origin", options->allowed_origins,
                  "A web origin (http://host:port) whose pages may call the API (repeatable); others get 403");
  cmd->add_option("--allow-host", options->allowed_hosts,
                  "A host name clients may use in Host besides IP addresses and localhost (repeatable)");
  cmd->add_option("--mcp-max-build-time", options->mcp_max_build_time,
                  "Budget of every build started over MCP at /mcp (90s, 30m, 2h): cancelled with reason budget");
  cmd->add_option("--retain-for", options->retain_for,
                  "Prune finished builds (record, event log, stored engine) this long after they finished (720h, 90m)");
  cmd->add_option("--retain-count", options->retention.max_count,
                  "Keep only the newest N finished builds; prune older ones with their logs and engines")
      ->check(CLI::Validator(
          [](const std::string& v) {
            return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos
                       ? std::string()
                       : "must be a whole number: 0 keeps every build, N keeps the newest N";
          },
          "N"));
  cmd->add_option("--on-shutdown", *on_shutdown, "On SIGTERM/SIGINT: cancel running builds, or let them finish")
      ->default_val("cancel");
  return cmd;
}

int RunServeCommand(service::ServerOptions options, const std::string& on_shutdown) {
  if (on_shutdown != "cancel" && on_shutdown != "finish") {
    std::fprintf(stderr, "trtwatch serve: --on-shutdown must be cancel or finish (got \"%s\")\n", on_shutdown.c_str());
    return exit_code::kUsage;
  }
  options.finish_on_shutdown = on_shutdown == "finish";
  const service::GraceResult grace = service::ParseGraceText(options.cancel_grace_text);
  if (grace.outcome != service::GraceResult::Outcome::kOk) {
    std::fprintf(stderr, "trtwatch serve: --cancel-grace \"%s\": %s\n", options.cancel_grace_text.c_str(),
                 grace.error.c_str());
    return exit_code::kUsage;
  }
  options.cancel_grace_seconds = grace.seconds;
  if (!options.mcp_max_build_time.empty()) {
    std::string error;
    if (!ParseDuration(options.mcp_max_build_time, &options.mcp_max_build_seconds, &error)) {
      std::fprintf(stderr, "trtwatch serve: --mcp-max-build-time: %s\n", error.c_str());
      return exit_code::kUsage;
    }
  }
  if (!options.retain_for.empty()) {
    std::string error;
    if (!ParseDuration(options.retain_for, &options.retention.max_age_seconds, &error)) {
      std::fprintf(stderr, "trtwatch serve: --retain-for: %s\n", error.c_str());
      return exit_code::kUsage;
    }
  }
  options.doctor_json = [] { return FormatDoctorJson(GatherDoctorReport()); };
  options.version = TRTWATCH_VERSION;
  return service::RunServer(options);
}

}  // namespace trtwatch
