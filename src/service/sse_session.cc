#include "service/sse_session.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <array>

#include "builds/metrics.h"
#include "protocol/sse_frame.h"

namespace trtwatch::service {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::awaitable;
using asio::use_awaitable;

namespace {

constexpr int kRetryMs = 2000;
// Frames are copied into one batch so that a write is one syscall (a gather write
// would take the ~150-byte frames 64 at a time).
constexpr size_t kWriteBatch = 64 * 1024;
// An idle stream keeps no more than this of its largest batch: 10,000 streams that
// once replayed a long log would otherwise each hold 64 KiB.
constexpr size_t kKeptBatchCapacity = 4 * 1024;

}  // namespace

std::string SseHead() {
  return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\n"
         "Connection: close\r\nX-Accel-Buffering: no\r\nServer: trtwatch\r\n\r\n" +
         SseRetry(kRetryMs);
}

SseSession::SseSession(asio::ip::tcp::socket socket, SseStreamSpec spec, const SseLimits& limits,
                       SseSource& source, Metrics& metrics)
    : stream_(std::move(socket)),
      spec_(std::move(spec)),
      limits_(limits),
      source_(source),
      metrics_(metrics),
      wake_(stream_.get_executor()),
      page_ready_(stream_.get_executor()),
      queue_(limits.coalesce_at, limits.cut_off_at),
      last_sent_(std::chrono::steady_clock::now()) {}

void SseSession::OnEvents(std::span<const FramedEvent* const> items, std::chrono::steady_clock::time_point now,
                          uint64_t delivery) {
  // A Last-Event-ID ahead of the live build: what it claims to have is not resent.
  while (!items.empty() && items.front()->seq <= spec_.after_seq) items = items.subspan(1);
  if (overflow_ || items.empty()) return;
  if (waiting_ && !woken_ && queue_.empty() && carry_.empty() && !failed_) {
    const size_t written = WriteNow(items);
    if (written > 0) last_sent_ = now;
    items = items.subspan(written);
    if (!carry_.empty() || failed_) Wake();
  }
  for (const FramedEvent* item : items) OnEvent(*item, delivery);
}

// As much of `items` as the socket takes now, gathered (asio takes up to 64 buffers a
// call), without waiting; returns how many items are done: written whole, or in part
// with their rest in carry_. A failed write (the client is gone) takes them all and
// leaves failed_ for the coroutine.
size_t SseSession::WriteNow(std::span<const FramedEvent* const> items) {
  constexpr size_t kGather = 64;
  std::array<asio::const_buffer, kGather> buffers;
  size_t done = 0;
  while (done < items.size()) {
    const size_t n = std::min(kGather, items.size() - done);
    for (size_t i = 0; i < n; ++i) buffers[i] = asio::buffer(*items[done + i]->frame);
    boost::system::error_code ec;
    size_t written = stream_.socket().write_some(std::span<const asio::const_buffer>(buffers.data(), n), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) return done;
    if (ec) {
      failed_ = ec;
      return items.size();
    }
    for (size_t i = 0; i < n; ++i) {
      const std::string& frame = *items[done]->frame;
      if (written >= frame.size()) {
        written -= frame.size();
        ++done;
        continue;
      }
      // The socket took less than the batch: this frame, or its rest, is next.
      if (written > 0) {
        carry_.assign(frame, written, std::string::npos);
        ++done;
      }
      return done;
    }
  }
  return done;
}

void SseSession::OnEvent(const FramedEvent& item, uint64_t delivery) {
  // A Last-Event-ID ahead of the live build: what it claims to have is not resent.
  if (overflow_ || item.seq <= spec_.after_seq) return;
  switch (queue_.Push(item, delivery)) {
    case SseQueue::PushResult::kCoalesced:
      metrics_.SseEventsDropped(1);
      break;
    case SseQueue::PushResult::kOverflow:
      overflow_ = true;
      break;
    case SseQueue::PushResult::kQueued:
      break;
  }
  Wake();
}

void SseSession::OnEnd() {
  ended_ = true;
  Wake();
}

void SseSession::Stop() {
  stopped_ = true;
  Wake();
}

void SseSession::Wake() {
  if (woken_) return;
  woken_ = true;
  wake_.cancel();
}

awaitable<void> SseSession::Run() {
  boost::system::error_code ec;
  // A small kernel send buffer: backlog then builds up in the session's own bounded,
  // coalescing queue, not as megabytes of stale steps per client in the kernel.
  stream_.socket().set_option(asio::socket_base::send_buffer_size(limits_.send_buffer), ec);
  // Non-blocking: OnEvents writes without waiting (the coroutine's writes wait in asio).
  stream_.socket().non_blocking(true, ec);
  ec.clear();
  std::string batch = SseHead();
  co_await Replay(&batch, &ec);
  while (!ec) {
    if (overflow_) {  // too slow to keep up: it reconnects and replays from the log
      metrics_.SseClientCutOff();
      break;
    }
    if (failed_) {
      ec = failed_;
      break;
    }
    TakeQueued(&batch);
    if (!batch.empty()) {
      co_await Write(&batch, &ec);
      continue;
    }
    if (ended_ || stopped_ || !spec_.live) break;
    co_await WaitForMore(&batch);
  }
  // A write failed (the client is gone: a closed socket is noticed at the next event or
  // heartbeat) while the build still runs and the service is not stopping.
  if (spec_.cancel_on_disconnect && ec && spec_.live && !ended_ && !source_.stopping()) {
    source_.CancelAbandoned(spec_.build_id);
  }
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
}

// The stored log up to replay_up_to, one bounded page at a time. Live events meanwhile
// wait in the queue: both are in seq order and never overlap (live events start after
// replay_up_to).
awaitable<void> SseSession::Replay(std::string* batch, boost::system::error_code* ec) {
  SsePage page;
  page.items = std::move(spec_.first_page);
  page.last_read = spec_.replayed;
  size_t next = 0;
  while (!*ec) {
    if (next == page.items.size()) {
      if (page.last_read >= spec_.replay_up_to) break;
      next = 0;
      if (!batch->empty()) {  // what is read goes out while the next page is read
        co_await Write(batch, ec);
        if (*ec) break;
      }
      if (!co_await ReadPage(page.last_read, &page)) {
        *ec = asio::error::broken_pipe;  // cannot go on without a gap: end; the client resumes
        break;
      }
      if (page.items.empty()) break;
    }
    *batch += *page.items[next++].frame;
    if (batch->size() >= kWriteBatch) co_await Write(batch, ec);
  }
}

awaitable<bool> SseSession::ReadPage(uint64_t after, SsePage* page) {
  bool done = false;
  source_.ReadPage(spec_.build_id, after, spec_.replay_up_to, page, stream_.get_executor(), [this, &done] {
    done = true;
    page_ready_.cancel();
  });
  while (!done) {
    boost::system::error_code ignored;
    page_ready_.expires_at(asio::steady_timer::time_point::max());
    co_await page_ready_.async_wait(asio::redirect_error(use_awaitable, ignored));
  }
  co_return page->ok;
}

// Writes `batch` (then empties it); a client that takes no bytes for the write timeout
// is cut off.
awaitable<void> SseSession::Write(std::string* batch, boost::system::error_code* ec) {
  stream_.expires_after(limits_.write_timeout);
  co_await asio::async_write(stream_, asio::buffer(*batch), asio::redirect_error(use_awaitable, *ec));
  last_sent_ = std::chrono::steady_clock::now();
  if (*ec == beast::error::timeout) metrics_.SseClientCutOff();
  if (batch->capacity() > kKeptBatchCapacity) {
    std::string().swap(*batch);
  } else {
    batch->clear();
  }
}

// Waits to be woken (new frames, the end, a stop); after a heartbeat period with
// nothing sent (OnEvents may write meanwhile), `batch` becomes a heartbeat.
awaitable<void> SseSession::WaitForMore(std::string* batch) {
  stream_.expires_never();
  woken_ = false;
  waiting_ = true;
  boost::system::error_code wait_ec;
  do {
    wake_.expires_at(last_sent_ + limits_.heartbeat);
    co_await wake_.async_wait(asio::redirect_error(use_awaitable, wait_ec));
  } while (!wait_ec && !woken_ && std::chrono::steady_clock::now() < last_sent_ + limits_.heartbeat);
  waiting_ = false;
  if (!wait_ec && !woken_) *batch = kSseHeartbeat;
}

void SseSession::TakeQueued(std::string* batch) {
  if (!carry_.empty()) {
    *batch += carry_;
    std::string().swap(carry_);
  }
  while (batch->size() < kWriteBatch) {
    std::optional<FramedEvent> item = queue_.Pop();
    if (!item) return;
    *batch += *item->frame;
  }
}

}  // namespace trtwatch::service
