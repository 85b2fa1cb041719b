// `trtwatch serve`: startup (options, store, listening socket, threads) and the
// graceful stop. The HTTP side is service/http_api.h, event streams service/sse_hubs.h.
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "service/server.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "platform/process_limits.h"
#include "builds/build_groups.h"
#include "builds/build_manager.h"
#include "service/http_api.h"
#include "service/http_request.h"
#include "builds/metrics.h"
#include "builds/stores/record_store.h"
#include "service/hosted_endpoint.h"
#include "service/sse_hubs.h"

namespace trtwatch::service {

// The builds layer's names this file uses.
using builds::BuildManager;
using builds::NowUnix;
using builds::PruneFinishedBuilds;
using builds::PruneReport;
using builds::RecordStore;

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr auto kRetentionPeriod = 10min;

int Usage(const std::string& message) {
  std::fprintf(stderr, "trtwatch serve: %s\n", message.c_str());
  return 2;
}

bool ParseListen(const std::string& listen, asio::ip::address* address, unsigned short* port, std::string* error) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    *error = "--listen must be HOST:PORT, e.g. 127.0.0.1:8470 (got \"" + listen + "\")";
    return false;
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  boost::system::error_code ec;
  *address = asio::ip::make_address(host, ec);
  int64_t p = -1;
  if (ec || !ParseInt(std::string_view(listen).substr(colon + 1), &p) || p < 0 || p > 65535) {
    *error = "--listen must be HOST:PORT with a numeric address and a port 0-65535, e.g. 127.0.0.1:8470 (got \"" +
             listen + "\")";
    return false;
  }
  *port = static_cast<unsigned short>(p);
  return true;
}

// Raises the descriptor limit to its hard maximum and caps connections below it,
// keeping a reserve for the builds' pipes, the store and the accept back-off.
ConnectionCaps ConnectionLimitsFor(const ServerOptions& options) {
  const int64_t available = RaiseOpenFileLimit();
  const int64_t reserve = 64 + 8 * static_cast<int64_t>(options.max_concurrent);
  const int64_t fit = std::max<int64_t>(16, available - reserve);
  ConnectionCaps l;
  l.connections = options.max_connections > 0 ? std::min<int64_t>(options.max_connections, fit) : fit;
  l.sse_clients = options.max_sse_clients > 0 ? std::min<int64_t>(options.max_sse_clients, l.connections)
                                              : l.connections;
  return l;
}

// I/O threads for event streams: --io-threads, or one per core beyond the manager's.
int IoThreadsFor(const ServerOptions& options) {
  if (options.io_threads > 0) return options.io_threads;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(cores - 1, 1, 16);
}

}  // namespace

bool ReadTokenFile(const std::string& path, std::string* token, std::string* error) {
  namespace fs = std::filesystem;
  constexpr uintmax_t kMaxTokenFile = 4096;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    *error = "cannot read --token-file \"" + path + "\": " + (ec ? ec.message() : "no such file");
    return false;
  }
  if (!fs::is_regular_file(st)) {
    *error = "--token-file \"" + path + "\" is not a regular file; put the token in a file of its own";
    return false;
  }
  if ((st.permissions() & (fs::perms::group_all | fs::perms::others_all)) != fs::perms::none) {
    *error = "--token-file \"" + path + "\" is accessible by other users; run: chmod 600 " + path;
    return false;
  }
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > kMaxTokenFile) {
    *error = "--token-file \"" + path + "\" is larger than 4096 bytes; it must hold the token only";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read --token-file \"" + path + "\"";
    return false;
  }
  std::string text(kMaxTokenFile + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  for (char c : text) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      *error = "--token-file \"" + path + "\" must hold one line: the token, without spaces or control characters";
      return false;
    }
  }
  if (text.size() < 16) {
    *error = "the token in --token-file must be at least 16 characters (try: openssl rand -hex 32 > FILE)";
    return false;
  }
  *token = std::move(text);
  return true;
}

CheckedServerOptions CheckServerOptions(const ServerOptions& options) {
  CheckedServerOptions checked;
  asio::ip::address address;
  unsigned short port = 0;
  std::string& error = checked.error;
  if (!ParseListen(options.listen, &address, &port, &error)) return checked;
  if (!options.token_file.empty() && !ReadTokenFile(options.token_file, &checked.token, &error)) return checked;
  if (!address.is_loopback() && checked.token.empty()) {
    error = "listening on " + options.listen +
            " (not loopback) needs a bearer token: add --token-file FILE, or listen on 127.0.0.1";
  } else if (options.max_connections < 0 || options.max_sse_clients < 0) {
    error = "--max-connections and --max-sse-clients must be 0 (automatic) or more";
  } else if (!(options.cancel_grace_seconds >= 0 && options.cancel_grace_seconds <= builds::kMaxCancelGraceSeconds)) {
    error = "--cancel-grace must be from 0 to 1h";
  }
  return checked;
}

int RunServer(const ServerOptions& options, const std::string& token, ServiceParts parts) {
  asio::ip::address address;
  unsigned short port = 0;
  std::string error;
  if (!ParseListen(options.listen, &address, &port, &error)) return Usage(error);
  asio::io_context& io = parts.io;
  RecordStore& store = parts.store;
  BuildManager& manager = parts.manager;
  IgnoreBrokenPipe();
  tcp::acceptor acceptor(io);
  boost::system::error_code ec;
  const tcp::endpoint endpoint(address, port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Usage("cannot listen on " + options.listen + ": " + ec.message() + " (pick another --listen port)");

  manager.Recover();
  // Retention: at start, then every kRetentionPeriod (a build is pruned at most that
  // long after it is due).
  asio::steady_timer retention_timer(io);
  std::function<void()> prune = [&] {
    const PruneReport pruned = PruneFinishedBuilds(store, options.retention, NowUnix(),
                                                    {manager.engine_dir(), manager.groups().groups_dir()});
    if (!pruned.error.empty()) std::fprintf(stderr, "trtwatch serve: could not prune old builds: %s\n", pruned.error.c_str());
    if (pruned.removed > 0) std::fprintf(stderr, "trtwatch serve: pruned %zu finished builds (retention)\n", pruned.removed);
    if (pruned.removed_groups > 0) {
      std::fprintf(stderr, "trtwatch serve: removed the folders of %zu build groups with their builds (retention)\n",
                   pruned.removed_groups);
    }
    retention_timer.expires_after(kRetentionPeriod);
    retention_timer.async_wait([&](const boost::system::error_code& e) {
      if (!e) prune();
    });
  };
  if (options.retention.enabled()) prune();
  const ConnectionCaps limits = ConnectionLimitsFor(options);
  auto hubs = std::make_unique<SseHubs>(io, manager, parts.metrics, IoThreadsFor(options));
  HttpApi api(io, options, manager, store, parts.artifacts, parts.metrics, *hubs, token, limits, parts.mcp);

  const tcp::endpoint bound = acceptor.local_endpoint();
  const std::string host = bound.address().is_v6() ? "[" + bound.address().to_string() + "]"
                                                   : bound.address().to_string();
  std::fprintf(stderr, "trtwatch serve: listening on http://%s:%u (data in %s)\n", host.c_str(), bound.port(),
               options.data_dir.c_str());

  asio::co_spawn(io, api.Accept(acceptor), asio::detached);

  // First SIGTERM/SIGINT: refuse new builds, cancel (or finish) running builds while
  // still answering health checks and reads, then stop accepting, let the streams
  // deliver their last events, stop. A second one kills the workers at once.
  asio::signal_set signals(io, SIGTERM, SIGINT);
  int signals_seen = 0;
  asio::steady_timer drain(io);
  std::function<void(int)> drain_streams = [&](int tries_left) {
    if (hubs->clients() == 0 || tries_left == 0) {
      io.stop();
      return;
    }
    drain.expires_after(50ms);
    drain.async_wait([&, tries_left](const boost::system::error_code&) { drain_streams(tries_left - 1); });
  };
  std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& e,
                                                                            int) {
    if (e) return;
    if (++signals_seen == 1) {
      std::fprintf(stderr, "trtwatch serve: stopping (%s running builds); signal again to kill them\n",
                   options.finish_on_shutdown ? "finishing" : "cancelling");
      api.set_stopping();
      manager.Shutdown(!options.finish_on_shutdown, [&] {
        boost::system::error_code ignored;
        acceptor.close(ignored);
        drain_streams(60);
      });
    } else {
      manager.KillAll();
    }
    signals.async_wait(on_signal);
  };
  signals.async_wait(on_signal);

  io.run();
  hubs->Join();  // no I/O thread touches the manager from here on
  hubs.reset();  // its relays unsubscribe from the manager
  return 0;
}

}  // namespace trtwatch::service

