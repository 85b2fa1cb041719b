// One SSE session over a real loopback socket, with a fake source for the stored log:
// replay then live in order, Last-Event-ID, the write-timeout cut-off, and the cancel
// of an abandoned cancel_on_disconnect stream.
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "builds/metrics.h"
#include "protocol/sse_frame.h"
#include "service/sse_session.h"

namespace trtwatch::service {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

FramedEvent Item(uint64_t seq, std::string_view payload = "{}") {
  FramedEvent item;
  item.seq = seq;
  item.frame = std::make_shared<const std::string>(SseFrame(seq, "phase_start", payload));
  return item;
}

// The stored log holds events 1..`last`; pages of two.
class FakeSource final : public SseSource {
 public:
  void ReadPage(const std::string& id, uint64_t after, uint64_t up_to, SsePage* page, asio::any_io_executor reply_on,
                std::function<void()> done) override {
    read_ids.push_back(id);
    page->items.clear();
    for (uint64_t seq = after + 1; seq <= up_to && page->items.size() < 2; ++seq) page->items.push_back(Item(seq));
    page->last_read = page->items.empty() ? up_to : page->items.back().seq;
    page->ok = readable;
    if (!readable) page->error = "disk on fire";
    asio::post(reply_on, std::move(done));  // as the real one: never inline
  }
  void CancelAbandoned(const std::string& id) override { abandoned.push_back(id); }
  bool stopping() const override { return false; }

  bool readable = true;
  std::vector<std::string> read_ids;
  std::vector<std::string> abandoned;
};

struct Connected {
  tcp::socket client;
  tcp::socket server;
};

Connected Connect(asio::io_context& io) {
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  tcp::socket client(io);
  client.connect(acceptor.local_endpoint());
  return Connected{std::move(client), acceptor.accept()};
}

std::vector<uint64_t> Ids(const std::string& text) {
  std::vector<uint64_t> ids;
  static const std::regex kId("(^|\n)id: ([0-9]+)\n");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kId); it != std::sregex_iterator(); ++it) {
    ids.push_back(std::stoull((*it)[2]));
  }
  return ids;
}

// A connected pair of sockets, the session's fake source and its metrics; a live
// stream of build b_1 unless a test says otherwise.
class SseSessionTest : public ::testing::Test {
 protected:
  SseSessionTest() : c_(Connect(io_)) {
    spec_.build_id = "b_1";
    spec_.live = true;
  }

  // Starts the session; `ended_` is set when it has closed the stream.
  SseSession& Start(const SseLimits& limits = SseLimits()) {
    session_.emplace(std::move(c_.server), spec_, limits, source_, metrics_);
    return *session_;
  }
  void Run() {
    asio::co_spawn(io_, session_->Run(), [this](std::exception_ptr) { ended_ = true; });
    io_.run_for(10s);
  }
  // Runs the session and returns what the client received until it closed.
  std::string RunAndRead() {
    std::string received;
    asio::async_read(c_.client, asio::dynamic_buffer(received), [](boost::system::error_code, size_t) {});
    Run();
    EXPECT_TRUE(ended_);
    return received;
  }

  void WaitUntilIdle(const SseSession& session) {
    for (int i = 0; i < 1000 && !session.idle(); ++i) io_.run_one_for(10ms);
    ASSERT_TRUE(session.idle());
  }

  asio::io_context io_;
  Connected c_;
  FakeSource source_;
  Metrics metrics_;
  SseStreamSpec spec_;
  std::optional<SseSession> session_;
  bool ended_ = false;
};

TEST_F(SseSessionTest, ReplaysTheLogInPagesThenLiveEventsInOrder) {
  spec_.replay_up_to = 5;
  spec_.first_page = {Item(1), Item(2)};
  spec_.replayed = 2;
  SseSession& session = Start();
  // Live events arrive while the log is replayed; they wait in the queue.
  session.OnEvent(Item(6));
  session.OnEvent(Item(7));
  session.OnEnd();
  const std::string received = RunAndRead();
  EXPECT_EQ(received.rfind("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream", 0), 0u) << received;
  EXPECT_NE(received.find("retry: 2000\n\n"), std::string::npos);
  EXPECT_EQ(Ids(received), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(source_.read_ids, (std::vector<std::string>{"b_1", "b_1"}));  // pages 3-4 and 5
}

TEST_F(SseSessionTest, ALastEventIdAheadOfTheBuildIsNotResent) {
  spec_.after_seq = 9;  // the client claims 9; the log ends at 5
  spec_.replay_up_to = 5;
  spec_.replayed = 9;
  SseSession& session = Start();
  for (uint64_t seq = 6; seq <= 11; ++seq) session.OnEvent(Item(seq));
  session.OnEnd();
  EXPECT_EQ(Ids(RunAndRead()), (std::vector<uint64_t>{10, 11}));
  EXPECT_TRUE(source_.read_ids.empty());
}

TEST_F(SseSessionTest, AnUnreadableLogEndsTheStreamWithoutAGap) {
  source_.readable = false;
  spec_.replay_up_to = 5;
  spec_.first_page = {Item(1), Item(2)};
  spec_.replayed = 2;
  Start().OnEvent(Item(6));
  // 1 and 2, then the end: never 6 after a hole (the client resumes from 2).
  EXPECT_EQ(Ids(RunAndRead()), (std::vector<uint64_t>{1, 2}));
}

TEST_F(SseSessionTest, AClientThatStopsReadingIsCutOffAfterTheWriteTimeout) {
  c_.client.set_option(asio::socket_base::receive_buffer_size(4096));
  SseLimits limits;
  limits.write_timeout = 200ms;
  limits.send_buffer = 4096;
  SseSession& session = Start(limits);
  const std::string payload = "{\"x\":\"" + std::string(16 * 1024, 'a') + "\"}";
  for (uint64_t seq = 1; seq <= 200; ++seq) session.OnEvent(Item(seq, payload));  // 3 MiB, never read
  const auto start = std::chrono::steady_clock::now();
  Run();
  EXPECT_TRUE(ended_);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_NE(metrics_.Render(0, 0).find("trtwatch_sse_clients_cut_off_total 1\n"), std::string::npos);
  EXPECT_TRUE(source_.abandoned.empty());  // not a cancel_on_disconnect stream
}

TEST_F(SseSessionTest, AFollowerWithCancelOnDisconnectThatGoesAwayCancelsItsBuild) {
  spec_.cancel_on_disconnect = true;
  SseLimits limits;
  limits.heartbeat = 20ms;  // the heartbeat's write finds the closed socket
  Start(limits);
  c_.client.close();
  Run();
  EXPECT_TRUE(ended_);
  EXPECT_EQ(source_.abandoned, (std::vector<std::string>{"b_1"}));
}

TEST_F(SseSessionTest, AFollowerThatStaysUntilTheEndCancelsNothing) {
  spec_.cancel_on_disconnect = true;
  SseSession& session = Start();
  session.OnEvent(Item(1));
  session.OnEnd();
  EXPECT_EQ(Ids(RunAndRead()), (std::vector<uint64_t>{1}));
  EXPECT_TRUE(source_.abandoned.empty());
}

// An idle session writes a hub's batch at once, straight from the shared frames; what
// the socket does not take (here most of 3 MiB, into a 4 KiB send buffer) goes out later, in
// order, from the rest of a frame cut in the middle on. (The client's receive buffer
// stays large: a tiny one stalls loopback TCP on zero-window probes.)
TEST_F(SseSessionTest, ABatchWrittenAtOnceArrivesWholeAndInOrderWhenTheSocketTakesPartOfIt) {
  SseLimits limits;
  limits.send_buffer = 4096;
  SseSession& session = Start(limits);
  const std::string payload = "{\"x\":\"" + std::string(16 * 1024 + 7, 'a') + "\"}";
  std::vector<FramedEvent> items;
  for (uint64_t seq = 1; seq <= 200; ++seq) items.push_back(Item(seq, payload));
  std::vector<const FramedEvent*> batch;
  for (const FramedEvent& item : items) batch.push_back(&item);
  std::string received;
  asio::async_read(c_.client, asio::dynamic_buffer(received), [](boost::system::error_code, size_t) {});
  asio::co_spawn(io_, session.Run(), [this](std::exception_ptr) { ended_ = true; });
  WaitUntilIdle(session);  // the head is out; the session waits for events
  session.OnEvents(std::span<const FramedEvent* const>(batch).subspan(0, 100), std::chrono::steady_clock::now());
  session.OnEvents(std::span<const FramedEvent* const>(batch).subspan(100), std::chrono::steady_clock::now());
  items.clear();  // the session holds what it still needs
  session.OnEnd();
  io_.run_for(10s);
  ASSERT_TRUE(ended_);
  std::string expected = SseHead();
  for (uint64_t seq = 1; seq <= 200; ++seq) expected += *Item(seq, payload).frame;
  EXPECT_EQ(received.size(), expected.size());
  EXPECT_TRUE(received == expected);  // every frame whole, in order, nothing twice
  EXPECT_EQ(Ids(received).size(), 200u);
}

// Events the client already has (Last-Event-ID) are skipped in a batch too.
TEST_F(SseSessionTest, ABatchSkipsWhatTheLastEventIdHas) {
  spec_.after_seq = 2;
  SseSession& session = Start();
  const std::vector<FramedEvent> items = {Item(1), Item(2), Item(3), Item(4)};
  const std::vector<const FramedEvent*> batch = {&items[0], &items[1], &items[2], &items[3]};
  std::string received;
  asio::async_read(c_.client, asio::dynamic_buffer(received), [](boost::system::error_code, size_t) {});
  asio::co_spawn(io_, session.Run(), [this](std::exception_ptr) { ended_ = true; });
  WaitUntilIdle(session);
  session.OnEvents(batch, std::chrono::steady_clock::now());
  session.OnEnd();
  io_.run_for(10s);
  ASSERT_TRUE(ended_);
  EXPECT_EQ(Ids(received), (std::vector<uint64_t>{3, 4}));
}

}  // namespace
}  // namespace trtwatch::service
