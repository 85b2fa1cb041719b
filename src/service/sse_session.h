// One Server-Sent Events client: the replay of a build's stored log, then its live
// events (or every record change), written to the client's socket in batches, with a
// heartbeat when idle; a client that stops reading is cut off.
//
// Threading: a session lives on one I/O thread, its hub's (service/sse_hubs.h): it is
// created, fed (OnEvent/OnEnd/Stop) and run there, and is not synchronised. What it
// needs from the build manager's thread (a page of the stored log, a cancel) it asks
// of its SseSource, which crosses over.
#pragma once

#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "service/sse.h"

namespace trtwatch::builds {
class Metrics;
}

namespace trtwatch::service {

using builds::Metrics;

struct SseStreamSpec {
  enum class Kind { kBuildEvents, kRecordChanges };
  Kind kind = Kind::kBuildEvents;
  std::string build_id;
  uint64_t after_seq = 0;     // Last-Event-ID: live events up to here are not sent
  uint64_t replay_up_to = 0;  // the stored log's end when subscribed: replayed, then live
  bool live = false;          // live events follow the replay (OnEvent, then OnEnd)
  bool cancel_on_disconnect = false;
  std::vector<FramedEvent> first_page;  // read before answering, so that an unreadable log is a 500
  uint64_t replayed = 0;            // where first_page ends
};

struct SseLimits {
  size_t coalesce_at = 256;  // queued events before steps coalesce
  size_t cut_off_at = 4096;  // queued events before a slow client is cut off
  std::chrono::milliseconds write_timeout{30'000};  // a client that takes no bytes for this long is gone
  std::chrono::milliseconds heartbeat{15'000};
  int send_buffer = 64 * 1024;  // the socket's kernel buffer
};

// One bounded page of a build's stored log.
struct SsePage {
  std::vector<FramedEvent> items;
  uint64_t last_read = 0;  // where the next page starts
  bool ok = false;
  std::string error;  // why the log could not be read
};

// What a session asks of the build manager's thread.
class SseSource {
 public:
  // Reads `page` (BuildManager::ReplayPage: seq in (after, up_to]) on the manager's
  // thread, then posts `done` to `reply_on`; the page is written before `done` runs.
  // Nothing else is held: if the service stops first, `done` never runs.
  virtual void ReadPage(const std::string& id, uint64_t after, uint64_t up_to, SsePage* page,
                        boost::asio::any_io_executor reply_on, std::function<void()> done) = 0;
  // The follower of a cancel_on_disconnect stream went away before its build ended.
  virtual void CancelAbandoned(const std::string& id) = 0;
  virtual bool stopping() const = 0;

 protected:
  ~SseSource() = default;
};

class SseSession {
 public:
  SseSession(boost::asio::ip::tcp::socket socket, SseStreamSpec spec, const SseLimits& limits, SseSource& source,
             Metrics& metrics);

  // The response's head, the replay, then live frames until the end. Once.
  boost::asio::awaitable<void> Run();

  // The hub's batch of live events for this session's channel, in seq order (pointers
  // into the hub's batch, valid for the call). An idle session (waiting, nothing
  // queued) writes them at once from the shared frames in one gathered, non-blocking
  // write: no copy, no wake-up of its coroutine. What the socket does not take now, and
  // every event while the session is busy, is queued (OnEvent) for the coroutine.
  // `now`: the hub's time for the batch (when the session last sent something, for
  // the heartbeat); `delivery`: the hub's number of the batch (SseQueue).
  void OnEvents(std::span<const FramedEvent* const> items, std::chrono::steady_clock::time_point now,
                uint64_t delivery = 0);
  void OnEvent(const FramedEvent& item, uint64_t delivery = 0);
  void OnEnd();  // the build's stream is over (or the service stops)
  void Stop();   // the service stops: a record-changes stream ends now

  const SseStreamSpec& spec() const { return spec_; }
  // Waiting for events with nothing queued: the next OnEvents writes at once.
  bool idle() const { return waiting_ && !woken_ && queue_.empty() && carry_.empty() && !failed_; }

 private:
  boost::asio::awaitable<void> Replay(std::string* batch, boost::system::error_code* ec);
  boost::asio::awaitable<bool> ReadPage(uint64_t after, SsePage* page);
  boost::asio::awaitable<void> Write(std::string* batch, boost::system::error_code* ec);
  boost::asio::awaitable<void> WaitForMore(std::string* batch);
  void TakeQueued(std::string* batch);
  size_t WriteNow(std::span<const FramedEvent* const> items);
  void Wake();

  boost::beast::tcp_stream stream_;
  SseStreamSpec spec_;
  const SseLimits limits_;
  SseSource& source_;
  Metrics& metrics_;
  boost::asio::steady_timer wake_;
  boost::asio::steady_timer page_ready_;  // cancelled when a page read on the manager's thread is in
  SseQueue queue_;
  bool woken_ = false;  // a wake-up is on its way: more need not cancel the timer again
  bool waiting_ = false;  // the coroutine waits in WaitForMore: no write in flight, OnEvents may write
  std::string carry_;     // the rest of a frame OnEvents wrote in part: goes out first
  boost::system::error_code failed_;  // OnEvents' write failed: the client is gone
  std::chrono::steady_clock::time_point last_sent_;  // the heartbeat is due a period after this
  bool ended_ = false;
  bool stopped_ = false;
  bool overflow_ = false;
};

// The start of every event stream's response: headers, then how long to wait before
// reconnecting.
std::string SseHead();

}  // namespace trtwatch::service
