// The `trtwatch serve` HTTP service: REST API, Server-Sent Events, metrics.
//
// One thread runs one Asio event loop holding every connection (HTTP/1.1 keep-alive,
// long-lived SSE streams), the build manager and its worker pipes, and the record
// store. Beast is confined to server.cc; this header stays light.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace trtwatch::service {

struct ServerOptions {
  std::string listen = "127.0.0.1:8470";  // HOST:PORT; port 0 picks a free one
  std::string data_dir = "trtwatch-data";
  std::vector<std::string> model_roots;
  std::string token_file;  // bearer token; required for a non-loopback bind
  int max_concurrent = 2;
  int queue_limit = 100;
  size_t body_limit = 64 * 1024;
  double cancel_grace_seconds = 10;
  bool finish_on_shutdown = false;  // --on-shutdown finish (default: cancel)
  // MCP over Streamable HTTP at /mcp (docs/mcp.md): its server-wide build budget
  // (0 = none), what its doctor tool reports, and the version it announces.
  std::string mcp_max_build_time;  // as given; parsed into mcp_max_build_seconds
  double mcp_max_build_seconds = 0;
  std::function<std::string()> doctor_json;
  std::string version;
};

// Runs the service until SIGTERM/SIGINT and a graceful stop. Returns the exit code;
// a bad option prints a message naming the problem and the fix and returns 2.
int RunServer(const ServerOptions& options);

// Constant-time comparison of a presented token with the expected one.
bool TokenMatches(const std::string& presented, const std::string& expected);

}  // namespace trtwatch::service
