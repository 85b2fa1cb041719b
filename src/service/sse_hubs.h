// The service's SSE streams, spread over I/O threads ("hubs").
//
// The build manager's thread hands each event to every hub that has a follower of its
// build, once: a lock, an append and, per batch, one post. Each hub's thread delivers
// it to its own sessions (service/sse_session.h) and writes to their sockets. So
// fan-out costs the manager's thread per hub rather than per client, and the writes of
// 10,000 streams run in parallel. Every event is serialised once: all sessions share
// its frame.
//
// A hub's queue carries events, ends and new sessions in one order, so a session that
// joins after the stored log's seq N is delivered exactly the live events after N.
//
// Threading: the methods below are called on the manager's thread (the one that runs
// `manager_io`), except clients(), which any thread may call.
#pragma once

#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "builds/build_manager.h"
#include "service/sse_session.h"

namespace trtwatch::service {

using builds::BuildManager;

class SseHubs final : public SseSource {
 public:
  // `threads` I/O threads (at least 1).
  SseHubs(boost::asio::io_context& manager_io, BuildManager& manager, Metrics& metrics, int threads,
          const SseLimits& limits = SseLimits());
  ~SseHubs();
  SseHubs(const SseHubs&) = delete;
  SseHubs& operator=(const SseHubs&) = delete;

  // The hub for the next stream (round robin).
  size_t Pick();
  // Follows build `id` on `hub`: live events after the returned last_seq will reach a
  // session started there (StartBuildStream) before any later manager callback.
  BuildManager::Subscription Subscribe(size_t hub, const std::string& id);
  // Hands `socket` (its request read, nothing written) to `hub`, which runs the stream.
  void StartBuildStream(size_t hub, boost::asio::ip::tcp::socket socket, SseStreamSpec spec);
  // Every record change from now on (GET /builds/changes).
  void StartRecordStream(size_t hub, boost::asio::ip::tcp::socket socket);

  // The service is stopping: record-change streams end now; build streams end with
  // their builds (the manager ends them).
  void SetStopping();
  // Stops the I/O threads and drops the sessions still open. The manager's callbacks
  // may still come (to the relays, which outlive this) but reach no session.
  void Join();

  int64_t clients() const { return clients_.load(std::memory_order_relaxed); }
  size_t size() const { return hubs_.size(); }

  // SseSource: what sessions ask of the manager's thread.
  void ReadPage(const std::string& id, uint64_t after, uint64_t up_to, SsePage* page,
                boost::asio::any_io_executor reply_on, std::function<void()> done) override;
  void CancelAbandoned(const std::string& id) override;
  bool stopping() const override { return stopping_.load(std::memory_order_relaxed); }

 private:
  class Hub;
  class Relay;

  void Start(size_t hub, uint64_t channel, boost::asio::ip::tcp::socket socket, SseStreamSpec spec);
  void Forget(size_t hub, const std::string& id);  // a relay whose build ended

  boost::asio::io_context& manager_io_;
  BuildManager& manager_;
  Metrics& metrics_;
  const SseLimits limits_;
  std::vector<std::unique_ptr<Hub>> hubs_;
  // The manager's thread only: per hub, the relay of each followed build, and of the
  // record changes (registered at the first such stream).
  std::vector<std::map<std::string, std::unique_ptr<Relay>>> relays_;
  std::vector<std::unique_ptr<Relay>> record_relays_;
  uint64_t next_channel_ = 1;  // 0 is the record changes'
  size_t next_hub_ = 0;
  // Atomic: counted up on the manager's thread, down on the hubs', read anywhere (caps).
  std::atomic<int64_t> clients_{0};
  // Atomic: set on the manager's thread, read by sessions on the hubs'.
  std::atomic<bool> stopping_{false};
};

}  // namespace trtwatch::service
