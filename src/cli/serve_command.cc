#include "cli/serve_command.h"

#include <algorithm>
#include <cstdio>

#include <trtwatch/result.h>

#include "cli/doctor_command.h"
#include "cli/replica_flags.h"
#include "cli/storage_flags.h"
#include "runner/duration.h"
#include "app/run_serve.h"
#include "core/memory_size.h"
#include "builds/build_request.h"

#ifndef TRTWATCH_VERSION
#define TRTWATCH_VERSION "0.0.0"
#endif

namespace trtwatch {

namespace {

// Where builds run: this host's processes or Slurm jobs, and the GPU types they may ask for.
void AddExecutorFlags(CLI::App* cmd, service::ServerOptions* options) {
  cmd->add_option("--executor", options->builds.executor,
                  "Where builds run: local (processes of this host) or slurm (one Slurm batch job per build; "
                  "docs/slurm.md)")
      ->default_val("local");
  cmd->add_option("--slurm-partition", options->builds.slurm_partition, "The Slurm partition builds are submitted to");
  cmd->add_option("--slurm-account", options->builds.slurm_account, "The Slurm account builds are charged to");
  cmd->add_option("--slurm-arg", options->builds.slurm_args,
                  "One more sbatch option for every build's job, e.g. --slurm-arg=--gres=gpu:1 (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--gpu-type", options->builds.gpu_types,
                  "A GPU type builds may ask for (\"gpu\": {\"type\": NAME}): NAME=gres:TYPE or NAME=feature:FEATURE, "
                  "optionally ,cc=MAJOR.MINOR, e.g. h200=gres:h200,cc=9.0 (repeatable; docs/slurm.md)")
      ->allow_extra_args(false);
  cmd->add_option("--gpu-types", options->builds.gpu_types_file,
                  "A JSON file of GPU types: {\"h200\": {\"gres\": \"h200\", \"compute_capability\": \"9.0\"}}");
}

// How many builds run at once, on which GPUs, and how many may wait.
void AddCapacityFlags(CLI::App* cmd, service::ServerOptions* options) {
  cmd->add_option("--max-concurrent", options->builds.max_concurrent,
                  "Builds running at once; more wait in a queue (default: one per GPU, --gpus and --builds-per-gpu; "
                  "at least 1; 2 with --executor slurm)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--gpus", options->builds.gpus,
                  "The GPUs the local executor gives builds, in CUDA's numbering as `trtwatch doctor` lists them, "
                  "e.g. 0,2,3 (default: all)");
  cmd->add_option("--builds-per-gpu", options->builds.builds_per_gpu, "Builds that may share one GPU at once")
      ->default_val(1)
      ->check(CLI::Range(1, 64));
  cmd->add_option("--queue-limit", options->builds.queue_limit, "Builds that may wait; beyond it POST /builds gets 429")
      ->default_val(100);
}

// The bounds on connections and event streams, and the threads that write them.
void AddConnectionFlags(CLI::App* cmd, service::ServerOptions* options) {
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
}

// When finished builds are pruned.
// Who may call: users and roles, the one admin token, a single-sign-on proxy.
void AddUserFlags(CLI::App* cmd, service::ServerOptions* options) {
  cmd->add_option("--token-file", options->token_file,
                  "File holding the bearer token of one admin, named admin (a non-loopback --listen needs it or "
                  "--users)");
  cmd->add_option("--users", options->users_file,
                  "Users file: NAME ROLE SHA256-OF-TOKEN a line, roles viewer|builder|admin (trtwatch user add); "
                  "re-read when it changes");
  cmd->add_option("--trusted-proxy", options->trusted_proxies,
                  "Address of a single-sign-on proxy whose --identity-header names the user (repeatable)");
  cmd->add_option("--identity-header", options->identity_header,
                  "Header a --trusted-proxy names the signed-in user in, e.g. X-Forwarded-User");
}

void AddRetentionFlags(CLI::App* cmd, service::ServerOptions* options) {
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
  cmd->add_option("--audit-retain-for", options->audit_retain_for,
                  "Prune audit-trail entries this long after they were recorded (0: keep them forever)")
      ->capture_default_str();
}

}  // namespace

CLI::App* AddServeCommand(CLI::App& app, service::ServerOptions* options, std::string* on_shutdown) {
  CLI::App* cmd = app.add_subcommand("serve", "Run the build service: REST API, live Server-Sent Events, records, metrics");
  cmd->add_option("--listen", options->listen, "HOST:PORT to listen on (port 0 picks a free one)")
      ->default_val("127.0.0.1:8470");
  cmd->add_option("--data-dir", options->builds.data_dir,
                  "Where engines and worker files are kept, and records and event logs with the SQLite store")
      ->default_val("trtwatch-data");
  AddStorageFlags(cmd, &options->builds);
  cmd->add_option("--max-upload-size", options->max_upload_size_text,
                  "Largest file PUT /models accepts (512M, 8G); larger bodies get 413")
      ->default_val("8G");
  AddUserFlags(cmd, options);
  AddCapacityFlags(cmd, options);
  AddReplicaFlags(cmd, &options->builds);
  AddExecutorFlags(cmd, options);
  AddConnectionFlags(cmd, options);
  cmd->add_option("--cancel-grace", options->cancel_grace_text,
                  "How long a cancelled build's worker may take to stop before SIGKILL (e.g. 10s, 2m)")
      ->default_val("10s");
  cmd->add_option("--allow-origin", options->allowed_origins,
                  "A web origin (http://host:port) whose pages may call the API (repeatable); others get 403");
  cmd->add_option("--allow-host", options->allowed_hosts,
                  "A host name clients may use in Host besides IP addresses and localhost (repeatable)");
  cmd->add_option("--mcp-max-build-time", options->mcp_max_build_time,
                  "Budget of every build started over MCP at /mcp (90s, 30m, 2h): cancelled with reason budget");
  AddRetentionFlags(cmd, options);
  cmd->add_option("--on-shutdown", *on_shutdown, "On SIGTERM/SIGINT: cancel running builds, or let them finish")
      ->default_val("cancel");
  return cmd;
}

namespace {

int Refuse(const char* flag, const std::string& value, const std::string& why) {
  std::fprintf(stderr, "trtwatch serve: %s \"%s\": %s\n", flag, value.c_str(), why.c_str());
  return exit_code::kUsage;
}

bool IsHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

// A host name with an optional :port, as a Host header carries it. An IP address
// needs no listing; a wildcard is no host name (the list is matched exactly).
std::string AllowedHostError(const std::string& host) {
  if (host.find('*') != std::string::npos) {
    return "wildcards match nothing: list each host name (--allow-host build.example.com), repeating the flag";
  }
  const bool bracketed = !host.empty() && host.front() == '[';  // an IPv6 literal: [::1]:8470
  const size_t name_end = bracketed ? host.find(']') : host.find(':');
  const size_t colon = bracketed && name_end != std::string::npos ? host.find(':', name_end) : name_end;
  const std::string name = bracketed ? host.substr(1, name_end == std::string::npos ? 0 : name_end - 1)
                                     : host.substr(0, colon);
  const std::string port = colon == std::string::npos ? "" : host.substr(colon + 1);
  const bool name_ok =
      !name.empty() && (bracketed ? name.find_first_not_of("0123456789abcdefABCDEF:.") == std::string::npos &&
                                        (colon == std::string::npos ? name_end + 1 == host.size() : colon == name_end + 1)
                                  : std::all_of(name.begin(), name.end(), IsHostChar));
  const bool port_ok = colon == std::string::npos ||
                       (!port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos);
  if (name_ok && port_ok) return {};
  return "not a host name (letters, digits, '-' and '.', optionally :PORT), e.g. --allow-host build.example.com";
}

// A web origin exactly as a browser sends it: http(s)://host[:port], no path.
std::string AllowedOriginError(const std::string& origin) {
  if (origin.find('*') != std::string::npos || origin == "null") {
    return "wildcards and \"null\" match nothing: list each origin (--allow-origin http://host:port), "
           "repeating the flag";
  }
  for (const std::string scheme : {"http://", "https://"}) {
    if (origin.compare(0, scheme.size(), scheme) == 0 && AllowedHostError(origin.substr(scheme.size())).empty()) {
      return {};
    }
  }
  return "not a web origin: give scheme, host and port as the browser sends them, with no path or trailing "
         "slash, e.g. --allow-origin http://dashboard.example.com:8080";
}

}  // namespace

int RunServeCommand(service::ServerOptions options, const std::string& on_shutdown) {
  if (on_shutdown != "cancel" && on_shutdown != "finish") {
    std::fprintf(stderr, "trtwatch serve: --on-shutdown must be cancel or finish (got \"%s\")\n", on_shutdown.c_str());
    return exit_code::kUsage;
  }
  options.finish_on_shutdown = on_shutdown == "finish";
#ifndef _WIN32  // the grace rule lives in the service's files, which Windows builds do not have
  const builds::GraceResult grace = builds::ParseGraceText(options.cancel_grace_text);
  if (grace.outcome != builds::GraceResult::Outcome::kOk) {
    std::fprintf(stderr, "trtwatch serve: --cancel-grace \"%s\": %s\n", options.cancel_grace_text.c_str(),
                 grace.error.c_str());
    return exit_code::kUsage;
  }
  options.builds.cancel_grace_seconds = grace.seconds;
#endif
  for (const std::string& origin : options.allowed_origins) {
    if (const std::string why = AllowedOriginError(origin); !why.empty()) return Refuse("--allow-origin", origin, why);
  }
  for (const std::string& host : options.allowed_hosts) {
    if (const std::string why = AllowedHostError(host); !why.empty()) return Refuse("--allow-host", host, why);
  }
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
  if (std::string error; !ParseDurationOrZero(options.audit_retain_for, &options.retention.audit_max_age_seconds,
                                              &error)) {
    std::fprintf(stderr, "trtwatch serve: --audit-retain-for: %s\n", error.c_str());
    return exit_code::kUsage;
  }
  const MemorySize upload_size = ParseMemorySize(options.max_upload_size_text, "--max-upload-size");
  if (!upload_size.bytes) {
    std::fprintf(stderr, "trtwatch serve: %s\n", upload_size.error.c_str());
    return exit_code::kUsage;
  }
  options.max_upload_size = *upload_size.bytes;
  options.doctor_json = [] { return FormatDoctorJson(GatherDoctorReport()); };
  options.version = TRTWATCH_VERSION;
  return app::RunServe(options);
}

}  // namespace trtwatch
