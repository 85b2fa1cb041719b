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
#include <regex>
#include <string>
#include <vector>

#include "service/metrics.h"
#include "service/sse_session.h"

namespace trtwatch::service {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

SseItem Item(uint64_t seq, std::string_view payload = "{}") {
  SseItem item;
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

// Runs `session` and reads what the client receives until the session closes.
std::string RunAndRead(asio::io_context& io, SseSession& session, tcp::socket& client) {
  std::string received;
  bool ended = false;
  asio::co_spawn(io, session.Run(), [&](std::exception_ptr) { ended = true; });
  asio::async_read(client, asio::dynamic_buffer(received), [](boost::system::error_code, size_t) {});
  io.run_for(10s);
  EXPECT_TRUE(ended);
  return received;
}

TEST(SseSessionTest, ReplaysTheLogInPagesThenLiveEventsInOrder) {
  asio::io_context io;
  Connected c = Connect(io);
  FakeSource source;
  Metrics metrics;
  SseStreamSpec spec;
  spec.build_id = "b_1";
  spec.replay_up_to = 5;
  spec.live = true;
  spec.first_page = {Item(1), Item(2)};
  spec.replayed = 2;
  SseSession session(std::move(c.server), spec, SseLimits(), source, metrics);
  // Live events arrive while the log is replayed; they wait in the queue.
  session.OnEvent(Item(6));
  session.OnEvent(Item(7));
  session.OnEnd();
  const std::string received = RunAndRead(io, session, c.client);
  EXPECT_EQ(received.rfind("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream", 0), 0u) << received;
  EXPECT_NE(received.find("retry: 2000\n\n"), std::string::npos);
  EXPECT_EQ(Ids(received), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(source.read_ids, (std::vector<std::string>{"b_1", "b_1"}));  // pages 3-4 and 5
}

TEST(SseSessionTest, ALastEventIdAheadOfTheBuildIsNotResent) {
  asio::io_context io;
  Connected c = Connect(io);
  FakeSource source;
  Metrics metrics;
  SseStreamSpec spec;
  spec.build_id = "b_1";
  spec.after_seq = 9;  // the client claims 9; the log ends at 5
  spec.replay_up_to = 5;
  spec.replayed = 9;
  spec.live = true;
  SseSession session(std::move(c.server), spec, SseLimits(), source, metrics);
  for (uint64_t seq = 6; seq <= 11; ++seq) session.OnEvent(Item(seq));
  session.OnEnd();
  EXPECT_EQ(Ids(RunAndRead(io, session, c.client)), (std::vector<uint64_t>{10, 11}));
  EXPECT_TRUE(source.read_ids.empty());
}

TEST(SseSessionTest, AnUnreadableLogEndsTheStreamWithoutAGap) {
  asio::io_context io;
  Connected c = Connect(io);
  FakeSource source;
  source.readable = false;
  Metrics metrics;
  SseStreamSpec spec;
  spec.build_id = "b_1";
  spec.replay_up_to = 5;
  spec.first_page = {Item(1), Item(2)};
  spec.replayed = 2;
  spec.live = true;
  SseSession session(std::move(c.server), spec, SseLimits(), source, metrics);
  session.OnEvent(Item(6));
  // 1 and 2, then the end: never 6 after a hole (the client resumes from 2).
  EXPECT_EQ(Ids(RunAndRead(io, session, c.client)), (std::vector<uint64_t>{1, 2}));
}

TEST(SseSessionTest, AClientThatStopsReadingIsCutOffAfterTheWriteTimeout) {
  asio::io_context io;
  Connected c = Connect(io);
  c.client.set_option(asio::socket_base::receive_buffer_size(4096));
  FakeSource source;
  Metrics metrics;
  SseLimits limits;
  limits.write_timeout = 200ms;
  limits.send_buffer = 4096;
  SseStreamSpec spec;
  spec.build_id = "b_1";
  spec.live = true;
  SseSession session(std::move(c.server), spec, limits, source, metrics);
  const std::string payload = "{\"x\":\"" + std::string(16 * 1024, 'a') + "\"}";
  for (uint64_t seq = 1; seq <= 200; ++seq) session.OnEvent(Item(seq, payload));  // 3 MiB, never read
  bool ended = false;
  const auto start = std::chrono::steady_clock::now();
  asio::co_spawn(io, session.Run(), [&](std::exception_ptr) { ended = true; });
  io.run_for(10s);
  EXPECT_TRUE(ended);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_NE(metrics.Render(0, 0).find("trtwatch_sse_clients_cut_off_total 1\n"), std::string::npos);
  EXPECT_TRUE(source.abandoned.empty());  // not a cancel_on_disconnect stream
}

TEST(SseSessionTest, AFollowerWithCancelOnDisconnectThatGoesAwayCancelsItsBuild) {
  asio::io_context io;
  Connected c = Connect(io);
  FakeSource source;
  Metrics metrics;
  SseLimits limits;
  limits.heartbeat = 20ms;  // the heartbeat's write finds the closed socket
  SseStreamSpec spec;
  spec.build_id = "b_7";
  spec.live = true;
  spec.cancel_on_disconnect = true;
  SseSession session(std::move(c.server), spec, limits, source, metrics);
  c.client.close();
  bool ended = false;
  asio::co_spawn(io, session.Run(), [&](std::exception_ptr) { ended = true; });
  io.run_for(10s);
  EXPECT_TRUE(ended);
  EXPECT_EQ(source.abandoned, (std::vector<std::string>{"b_7"}));
}

TEST(SseSessionTest, AFollowerThatStaysUntilTheEndCancelsNothing) {
  asio::io_context io;
  Connected c = Connect(io);
  FakeSource source;
  Metrics metrics;
  SseStreamSpec spec;
  spec.build_id = "b_7";
  spec.live = true;
  spec.cancel_on_disconnect = true;
  SseSession session(std::move(c.server), spec, SseLimits(), source, metrics);
  session.OnEvent(Item(1));
  session.OnEnd();
  EXPECT_EQ(Ids(RunAndRead(io, session, c.client)), (std::vector<uint64_t>{1}));
  EXPECT_TRUE(source.abandoned.empty());
}

}  // namespace
}  // namespace trtwatch::service
