// The options of `trtwatch serve`, as the command line gives them, and their check
// before anything is opened (the listen address, the token file, the caps).
//
// Threading: plain data and pure functions (the token file is read once, at startup).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "builds/builds_config.h"
#include "builds/retention.h"
#include "service/users_file.h"

namespace trtwatch::service {

using builds::RetentionPolicy;

struct ServerOptions {
  std::string listen = "127.0.0.1:8470";  // HOST:PORT; port 0 picks a free one
  builds::BuildsConfig builds;  // where builds are kept, how many run, where (builds/builds_config.h)
  std::string token_file;  // bearer token of one admin (users_file.h's kTokenFileUser)
  std::string users_file;  // --users: the users, their roles and token digests (service/users_file.h)
  // --trusted-proxy (repeatable) and --identity-header, both or neither: a request from
  // one of these addresses that carries the header is the user it names.
  std::vector<std::string> trusted_proxies;
  std::string identity_header;
  size_t body_limit = 64 * 1024;  // JSON bodies
  // Uploaded models (PUT /models/...; kept in builds.artifact_dir): the largest file
  // accepted (--max-upload-size).
  std::string max_upload_size_text = "8G";  // as given
  uint64_t max_upload_size = uint64_t{8} << 30;
  // Open connections and SSE streams; 0: as many as the descriptor limit allows after a
  // reserve for builds. Beyond them: 503 (connections) and 429 (streams), Retry-After.
  int max_connections = 0;
  int max_sse_clients = 0;
  int io_threads = 0;  // threads writing event streams; 0: one per core beyond the manager's
  std::string cancel_grace_text = "10s";  // as given on the command line; parsed into builds.cancel_grace_seconds
  bool finish_on_shutdown = false;  // --on-shutdown finish (default: cancel)
  // Retention (builds/retention.h): finished builds older than this, or beyond the
  // newest count, are pruned at start and every 10 minutes. 0 = kept forever.
  std::string retain_for;  // as given; parsed into retention.max_age_seconds
  std::string audit_retain_for = "8760h";  // as given; parsed into retention.audit_max_age_seconds (0: forever)
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

// --listen's HOST:PORT: the numeric address (brackets dropped, localhost as
// 127.0.0.1) and the port, or `error` naming the problem and the fix.
struct ListenAddress {
  std::string error;
  std::string host;
  unsigned short port = 0;
};
[[nodiscard]] ListenAddress ParseListen(const std::string& listen);

// Reads and checks a token file: a regular file, not accessible by group or others,
// one line of 16 to 4096 visible characters. Returns false with `*error` set.
bool ReadTokenFile(const std::string& path, std::string* token, std::string* error);

// The options checked and the users read (--users, --token-file), before anything is
// opened: `error` is empty, or names the problem and the fix.
struct CheckedServerOptions {
  std::string error;
  std::string token;  // from --token-file; empty without one
  std::optional<UsersSource> users;  // set when `error` is empty
};
[[nodiscard]] CheckedServerOptions CheckServerOptions(const ServerOptions& options);

}  // namespace trtwatch::service
