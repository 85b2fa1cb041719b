// The `trtwatch serve` HTTP service: REST API, Server-Sent Events, metrics, over the
// builds layer (src/builds/) that the composition root (app/run_serve.cc) assembles.
//
// One thread runs the Asio event loop of the build manager and its worker pipes, the
// record store and every HTTP request (service/http_api.h); event streams, once
// accepted, move to I/O threads that write them (service/sse_hubs.h). Startup and the
// graceful stop are in server.cc; this header stays light.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "builds/retention.h"

namespace boost::asio {
class io_context;
}

namespace trtwatch::builds {
class BuildManager;
class Metrics;
class RecordStore;
class ArtifactStore;
}  // namespace trtwatch::builds

namespace trtwatch::service {

class HostedEndpoint;
using builds::RetentionPolicy;

struct ServerOptions {
  std::string listen = "127.0.0.1:8470";  // HOST:PORT; port 0 picks a free one
  std::string data_dir = "trtwatch-data";
  std::string store;  // --store / TRTWATCH_STORE: empty for SQLite in data_dir, or postgresql://…
  std::vector<std::string> model_roots;
  std::string token_file;  // bearer token; required for a non-loopback bind
  int max_concurrent = 0;  // 0: one per GPU slot (app/builds_config.h)
  std::string gpus;        // --gpus
  int builds_per_gpu = 1;
  int queue_limit = 100;
  // Among the replicas sharing a PostgreSQL store (builds/replica_name.h): this one's
  // name (empty: HOSTNAME-PID) and how long its claims last unless renewed.
  std::string replica;
  double lease_seconds = 15;
  // Where builds run (--executor local|slurm) and the Slurm executor's sbatch options.
  std::string executor = "local";
  std::string slurm_partition;
  std::string slurm_account;
  std::vector<std::string> slurm_args;
  // GPU types builds may ask for (--gpu-type NAME=SLURM_SPEC, --gpu-types FILE; builds/gpu_routing.h).
  std::vector<std::string> gpu_types;
  std::string gpu_types_file;
  size_t body_limit = 64 * 1024;  // JSON bodies
  // Uploaded models (PUT /models/...): where they are kept (empty: DATA_DIR/artifacts)
  // and the largest file accepted (--max-upload-size).
  std::string artifact_dir;
  std::string max_upload_size_text = "8G";  // as given
  uint64_t max_upload_size = uint64_t{8} << 30;
  // Open connections and SSE streams; 0: as many as the descriptor limit allows after a
  // reserve for builds. Beyond them: 503 (connections) and 429 (streams), Retry-After.
  int max_connections = 0;
  int max_sse_clients = 0;
  int io_threads = 0;  // threads writing event streams; 0: one per core beyond the manager's
  std::string cancel_grace_text = "10s";  // as given on the command line
  double cancel_grace_seconds = 10;  // --cancel-grace: SIGTERM, then SIGKILL after this long
  bool finish_on_shutdown = false;  // --on-shutdown finish (default: cancel)
  // Retention (builds/retention.h): finished builds older than this, or beyond the
  // newest count, are pruned at start and every 10 minutes. 0 = kept forever.
  std::string retain_for;  // as given; parsed into retention.max_age_seconds
  RetentionPolicy retention;
  // Browser-borne requests: an Origin other than the service's own is refused unless
  // listed here ("http://host:port"); without a token, a Host that is neither an IP
  // address, localhost nor listed is refused (DNS rebinding).
  std::vector<std::string> allowed_origins;
  std::vector<std::string> allowed_hosts;
  // MCP over Streamable HTTP at /mcp (docs/mcp.md): its server-wide build budget
  // (0 = none), what its doctor tool reports, and the version it announces; the
  // composition root hands them to MCP's tools.
  std::string mcp_max_build_time;  // as given; parsed into mcp_max_build_seconds
  double mcp_max_build_seconds = 0;
  std::function<std::string()> doctor_json;
  std::string version;
};

// Why a request is refused as browser-borne (cross-origin or a foreign Host), or empty.
// `origin`/`host` are the header values (empty when absent); `token_required` says
// whether a bearer token guards the API (then a foreign Host cannot read anything).
std::string BrowserCheck(std::string_view origin, std::string_view host, bool token_required,
                         const ServerOptions& options);

// Reads and checks a token file: a regular file, not accessible by group or others,
// one line of 16 to 4096 visible characters. Returns false with `*error` set.
bool ReadTokenFile(const std::string& path, std::string* token, std::string* error);

// What the service runs on, assembled by the composition root: the builds layer's
// objects and the endpoint hosted at /mcp, all used on `io`'s thread.
struct ServiceParts {
  boost::asio::io_context& io;
  builds::RecordStore& store;
  builds::Metrics& metrics;
  builds::BuildManager& manager;
  builds::ArtifactStore& artifacts;
  HostedEndpoint& mcp;
};

// The options checked and the token read, before anything is opened: `error` is empty,
// or names the problem and the fix.
struct CheckedServerOptions {
  std::string error;
  std::string token;  // from --token-file; empty without one
};
CheckedServerOptions CheckServerOptions(const ServerOptions& options);

// Listens, recovers what an earlier process left (builds that were running become
// interrupted, queued ones run), and serves until SIGTERM/SIGINT and a graceful stop.
// Returns the exit code; 2 with a message naming the fix if it cannot listen.
int RunServer(const ServerOptions& options, const std::string& token, ServiceParts parts);

// Constant-time comparison of a presented token with the expected one.
bool TokenMatches(const std::string& presented, const std::string& expected);

}  // namespace trtwatch::service
