// trtwatch: observable, cancellable TensorRT engine builds.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/build_command.h"
#include "cli/cache_command.h"
#include "cli/doctor_command.h"
#include "cli/history_command.h"
#include "cli/mcp_command.h"
#include "cli/replay_command.h"
#ifdef TRTWATCH_HAS_RUN_COMMAND
#include "cli/run_command.h"
#endif
#include <trtwatch/result.h>
#include "cli/serve_command.h"
#include "cli/tensorrt_flags.h"
#include "cli/timing_cache_command.h"
#include "cli/unknown_command.h"
#include "cli/user_command.h"
#include "platform/utf8_edges.h"

#ifndef TRTWATCH_VERSION
#define TRTWATCH_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  CLI::App app{"trtwatch: live progress, clean cancellation and timing for TensorRT engine builds"};
  app.set_version_flag("--version", "trtwatch " TRTWATCH_VERSION);
  app.require_subcommand(1);

  trtwatch::BuildCommandOptions build;
  CLI::App* build_cmd = app.add_subcommand("build", "Build a TensorRT engine (or a simulated one) with live progress");
  build_cmd->add_option("model", build.model, "ONNX model to build (needs TensorRT)");
  build_cmd->add_option("-o,--output", build.output, "Where to write the engine");
  build_cmd->add_option("--simulate", build.simulate,
                        "Simulate a build: small-cnn, large-transformer, failing, or a profile JSON file");
  build_cmd->add_option("--seed", build.seed, "Seed of the simulated build (same seed, same build)")->default_val(1);
  build_cmd->add_option("--speed", build.speed, "Time scale of the simulated build (2 = twice as fast)")
      ->default_val(1.0);
  build_cmd->add_option("--progress", build.progress,
                        "auto|tty|plain|json|quiet (auto: tty on an interactive terminal, plain otherwise; "
                        "TRTWATCH_PROGRESS applies while this is auto)")
      ->default_val("auto");
  build_cmd->add_option("--color", build.color, "auto|always|never (auto honours NO_COLOR, CLICOLOR_FORCE)")
      ->default_val("auto");
  build_cmd->add_option("--events", build.events_file, "Also write the event stream (JSON lines) to FILE");
  build_cmd->add_option("--trace", build.trace_file,
                        "Write the phase timeline to FILE.json (Chrome Trace Event format: Perfetto, chrome://tracing)");
  build_cmd->add_option("--timeout", build.timeout, "Cancel the build after DUR (90, 45s, 1.5m, 2h): exit 124");
  build_cmd->add_option("--kill-after", build.kill_after,
                        "Exit 137 if the builder has not stopped DUR after a cancel request (Ctrl+C, --timeout...)");
  build_cmd->add_option("--stall-timeout", build.stall_timeout,
                        "Warn (stall event) when the builder reports nothing for DUR");
  build_cmd->add_option("--stall-action", build.stall_action, "warn|cancel: what a stall does (cancel: exit 124)")
      ->default_val("warn");

  build_cmd->add_option("--engine-cache", build.engine_cache,
                        "Reuse engines built before with the same key, and keep this one, in DIR (default: "
                        "TRTWATCH_ENGINE_CACHE; docs/cache.md)");
  build_cmd->add_flag("--no-engine-cache", build.no_engine_cache, "Use no engine cache, whatever TRTWATCH_ENGINE_CACHE says");
  build_cmd->add_option("--engine-cache-max-size", build.engine_cache_max_size,
                        "Least recently used engines go past this size (e.g. 50G; default 100G)");
  build_cmd->add_option("--engine-cache-max-entries", build.engine_cache_max_entries,
                        "... or past this many engines (default 1000)");
  build_cmd->add_option("--history", build.history,
                        "Keep the build history in DIR (default: TRTWATCH_HISTORY, else ~/.local/state/trtwatch)");
  build_cmd->add_flag("--no-history", build.no_history, "Neither read nor add to the build history (no ETA)");

  trtwatch::AddTensorRtFlags(build_cmd, &build);

  trtwatch::CacheCommandOptions cache;
  CLI::App* cache_cmd = trtwatch::AddCacheCommand(app, &cache);
  trtwatch::HistoryCommands history = trtwatch::AddHistoryCommands(app);
  trtwatch::TimingCacheCommandOptions timing_cache;
  CLI::App* timing_cache_cmd = trtwatch::AddTimingCacheCommand(app, &timing_cache);

  trtwatch::DoctorOptions doctor;
  CLI::App* doctor_cmd =
      app.add_subcommand("doctor", "Show the NVIDIA driver, GPUs, TensorRT and backends this trtwatch can use");
  doctor_cmd->add_flag("--json", doctor.json, "One JSON object on stdout");

  trtwatch::service::ServerOptions serve;
  std::string on_shutdown;
  CLI::App* serve_cmd = trtwatch::AddServeCommand(app, &serve, &on_shutdown);

  trtwatch::UserCommandOptions user;
  CLI::App* user_cmd = trtwatch::AddUserCommand(app, &user);

  trtwatch::McpCommandOptions mcp;
  CLI::App* mcp_cmd = trtwatch::AddMcpCommand(app, &mcp);

  trtwatch::ReplayCommandOptions replay;
  CLI::App* replay_cmd = trtwatch::AddReplayCommand(app, &replay);

#ifdef TRTWATCH_HAS_RUN_COMMAND
  trtwatch::RunCommandOptions run;
  CLI::App* run_cmd = trtwatch::AddRunCommand(app, &run);
#endif

  // UTF-8 arguments on every platform (Windows: from the wide command line, so that
  // paths outside the ANSI code page arrive intact).
  std::vector<std::string> args = trtwatch::Utf8Arguments(argc, argv);
  std::vector<char*> utf8_argv;
  for (std::string& arg : args) utf8_argv.push_back(arg.data());
  try {
    app.parse(static_cast<int>(utf8_argv.size()), utf8_argv.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string unknown = trtwatch::UnknownCommandError(app, {args.begin() + 1, args.end()});
    if (unknown.empty()) app.exit(e);
    if (!unknown.empty()) std::fprintf(stderr, "trtwatch: %s\n", unknown.c_str());
    return trtwatch::exit_code::kUsage;
  }
  if (build_cmd->parsed()) return trtwatch::RunBuildCommand(build);
  if (serve_cmd->parsed()) return trtwatch::RunServeCommand(serve, on_shutdown);
  if (doctor_cmd->parsed()) return trtwatch::RunDoctorCommand(doctor);
  if (cache_cmd->parsed()) return trtwatch::RunCacheCommand(cache);
  if (timing_cache_cmd->parsed()) return trtwatch::RunTimingCacheCommand(timing_cache);
  if (mcp_cmd->parsed()) return trtwatch::RunMcpCommand(mcp);
  if (user_cmd->parsed()) return trtwatch::RunUserCommand(user);
  if (replay_cmd->parsed()) return trtwatch::RunReplayCommand(replay);
#ifdef TRTWATCH_HAS_RUN_COMMAND
  if (run_cmd->parsed()) return trtwatch::RunRunCommand(run);
#endif
  if (const std::optional<int> code = trtwatch::RunHistoryCommands(history)) return *code;
  return trtwatch::exit_code::kUsage;
}
