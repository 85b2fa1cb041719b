#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "app/run_serve.h"

#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/builds_root.h"
#include "app/mcp_over_http.h"

namespace trtwatch::app {

namespace {

int Usage(const std::string& message) {
  std::fprintf(stderr, "trtwatch serve: %s\n", message.c_str());
  return 2;
}

BuildsConfig ConfigOf(const service::ServerOptions& options) {
  BuildsConfig config;
  config.store = options.store;
  config.data_dir = options.data_dir;
  config.artifact_dir = options.artifact_dir;
  config.model_roots = options.model_roots;
  config.max_concurrent = options.max_concurrent;
  config.gpus = options.gpus;
  config.builds_per_gpu = options.builds_per_gpu;
  config.queue_limit = options.queue_limit;
  config.cancel_grace_seconds = options.cancel_grace_seconds;
  config.replica = options.replica;
  config.lease_seconds = options.lease_seconds;
  config.executor = options.executor;
  config.slurm_partition = options.slurm_partition;
  config.slurm_account = options.slurm_account;
  config.slurm_args = options.slurm_args;
  config.gpu_types = options.gpu_types;
  config.gpu_types_file = options.gpu_types_file;
  config.max_build_seconds = options.mcp_max_build_seconds;
  if (options.doctor_json) config.doctor = [f = options.doctor_json] { return nlohmann::json::parse(f()); };
  return config;
}

}  // namespace

int RunServe(const service::ServerOptions& options) {
  const service::CheckedServerOptions checked = service::CheckServerOptions(options);
  if (!checked.error.empty()) return Usage(checked.error);
  boost::asio::io_context io(1);  // the manager's thread: builds, store, HTTP requests
  BuildsRoot::Opening opening = BuildsRoot::Open(io, ConfigOf(options));
  if (!opening.root) return Usage(opening.error);
  BuildsRoot& root = *opening.root;
  McpOverHttp mcp(root.tools(), mcp::ServerInfo{options.version, mcp::Instructions()});
  const int code = service::RunServer(options, checked.token,
                                      {io, root.store(), root.metrics(), root.manager(), root.artifacts(), mcp});
  opening.root.reset();  // tools, manager and workers go before the event loop does
  if (code == 0) std::fprintf(stderr, "trtwatch serve: stopped\n");
  return code;
}

}  // namespace trtwatch::app
