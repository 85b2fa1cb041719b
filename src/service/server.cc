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
#include <functional>
#include <memory>
#include <thread>

#include "core/clock.h"
#include "platform/process_limits.h"
#include "builds/build_groups.h"
#include "builds/build_manager.h"
#include "service/http_api.h"
#include "builds/metrics.h"
#include "builds/stores/record_store.h"
#include "service/hosted_endpoint.h"
#include "service/sse_hubs.h"

namespace trtwatch::service {

// The builds layer's names this file uses.
using builds::BuildManager;
using builds::PruneFinishedBuilds;
using builds::PruneReport;
using builds::RecordStore;

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

constexpr auto kRetentionPeriod = 10min;
// The listen backlog: room for a burst of clients (10,000 event streams at once) while
// the accept loop catches up. Linux clamps it to net.core.somaxconn (4096 by default
// since 5.4): raise that to use more (docs/deploy.md).
constexpr int kListenBacklog = 65535;

int Usage(const std::string& message) {
  std::fprintf(stderr, "trtwatch serve: %s\n", message.c_str());
  return 2;
}

// Raises the descriptor limit to its hard maximum and caps connections below it,
// keeping a reserve for the builds' pipes, the store and the accept back-off.
ConnectionCaps ConnectionLimitsFor(const ServerOptions& options) {
  const int64_t available = RaiseOpenFileLimit();
  const int64_t reserve = 64 + 8 * static_cast<int64_t>(options.builds.max_concurrent);
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

// Opens the listening socket on --listen; `error` names the fix when it cannot.
struct Listening {
  std::string error;
};
Listening Listen(tcp::acceptor& acceptor, const ServerOptions& options) {
  const ListenAddress listen = ParseListen(options.listen);
  if (!listen.error.empty()) return {listen.error};
  boost::system::error_code ec;
  const tcp::endpoint endpoint(asio::ip::make_address(listen.host, ec), listen.port);
  if (!ec) acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(kListenBacklog, ec);
  if (ec) return {"cannot listen on " + options.listen + ": " + ec.message() + " (pick another --listen port)"};
  return {};
}

// Retention: at start, then every kRetentionPeriod (a build is pruned at most that
// long after it is due).
class RetentionTimer {
 public:
  RetentionTimer(asio::io_context& io, const ServerOptions& options, RecordStore& store, BuildManager& manager)
      : timer_(io), options_(options), store_(store), manager_(manager) {}

  void Prune() {
    const PruneReport pruned = PruneFinishedBuilds(store_, options_.retention, Clock::SystemUnixSeconds(),
                                                    {manager_.engine_dir(), manager_.groups().groups_dir()});
    if (!pruned.error.empty()) std::fprintf(stderr, "trtwatch serve: could not prune old builds: %s\n", pruned.error.c_str());
    if (pruned.removed > 0) std::fprintf(stderr, "trtwatch serve: pruned %zu finished builds (retention)\n", pruned.removed);
    if (pruned.removed_groups > 0) {
      std::fprintf(stderr, "trtwatch serve: removed the folders of %zu build groups with their builds (retention)\n",
                   pruned.removed_groups);
    }
    PruneAudit();
    timer_.expires_after(kRetentionPeriod);
    timer_.async_wait([this](const boost::system::error_code& e) {
      if (!e) Prune();
    });
  }

 private:
  void PruneAudit() {
    const Result<int64_t> pruned = builds::PruneAuditTrail(store_, options_.retention, Clock::SystemUnixSeconds());
    if (!pruned.ok()) {
      std::fprintf(stderr, "trtwatch serve: could not prune the audit trail: %s\n", pruned.error().c_str());
    }
    if (pruned.ok() && *pruned > 0) {
      std::fprintf(stderr, "trtwatch serve: pruned %lld audit entries (--audit-retain-for)\n",
                   static_cast<long long>(*pruned));
    }
  }

  asio::steady_timer timer_;
  const ServerOptions& options_;
  RecordStore& store_;
  BuildManager& manager_;
};

void AnnounceListening(const tcp::acceptor& acceptor, const ServerOptions& options) {
  const tcp::endpoint bound = acceptor.local_endpoint();
  const std::string host = bound.address().is_v6() ? "[" + bound.address().to_string() + "]"
                                                   : bound.address().to_string();
  std::fprintf(stderr, "trtwatch serve: listening on http://%s:%u (data in %s)\n", host.c_str(), bound.port(),
               options.builds.data_dir.c_str());
}

// First SIGTERM/SIGINT: refuse new builds, cancel (or finish) running builds while
// still answering health checks and reads, then stop accepting, let the streams
// deliver their last events, stop. A second one kills the workers at once.
class GracefulStop {
 public:
  GracefulStop(asio::io_context& io, const ServerOptions& options, BuildManager& manager, HttpApi& api,
               SseHubs& hubs, tcp::acceptor& acceptor)
      : io_(io), options_(options), manager_(manager), api_(api), hubs_(hubs), acceptor_(acceptor),
        signals_(io, SIGTERM, SIGINT), drain_(io) {}

  void Arm() {
    signals_.async_wait([this](const boost::system::error_code& e, int) {
      if (e) return;
      OnSignal();
      Arm();
    });
  }

 private:
  void OnSignal() {
    if (++signals_seen_ > 1) {
      manager_.KillAll();
      return;
    }
    std::fprintf(stderr, "trtwatch serve: stopping (%s running builds); signal again to kill them\n",
                 options_.finish_on_shutdown ? "finishing" : "cancelling");
    api_.set_stopping();
    manager_.Shutdown(!options_.finish_on_shutdown, [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      DrainStreams(60);
    });
  }

  void DrainStreams(int tries_left) {
    if (hubs_.clients() == 0 || tries_left == 0) {
      io_.stop();
      return;
    }
    drain_.expires_after(50ms);
    drain_.async_wait([this, tries_left](const boost::system::error_code&) { DrainStreams(tries_left - 1); });
  }

  asio::io_context& io_;
  const ServerOptions& options_;
  BuildManager& manager_;
  HttpApi& api_;
  SseHubs& hubs_;
  tcp::acceptor& acceptor_;
  asio::signal_set signals_;
  asio::steady_timer drain_;
  int signals_seen_ = 0;
};

}  // namespace

int RunServer(const ServerOptions& options, UsersSource users, ServiceParts parts) {
  asio::io_context& io = parts.io;
  BuildManager& manager = parts.manager;
  IgnoreBrokenPipe();
  tcp::acceptor acceptor(io);
  if (const Listening listening = Listen(acceptor, options); !listening.error.empty()) return Usage(listening.error);

  manager.Recover();
  RetentionTimer retention(io, options, parts.store, manager);
  if (options.retention.enabled() || options.retention.audit_max_age_seconds > 0) retention.Prune();
  const ConnectionCaps limits = ConnectionLimitsFor(options);
  auto hubs = std::make_unique<SseHubs>(io, manager, parts.metrics, IoThreadsFor(options));
  HttpApi api(io, options, manager, parts.store, parts.artifacts, parts.metrics, parts.audit, *hubs, std::move(users),
              limits, parts.mcp);
  AnnounceListening(acceptor, options);
  asio::co_spawn(io, api.Accept(acceptor), asio::detached);
  GracefulStop stop(io, options, manager, api, *hubs, acceptor);
  stop.Arm();

  io.run();
  hubs->Join();  // no I/O thread touches the manager from here on
  hubs.reset();  // its relays unsubscribe from the manager
  return 0;
}

}  // namespace trtwatch::service

