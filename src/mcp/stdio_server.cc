#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "mcp/stdio_server.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <array>
#include <cstdio>
#include <memory>

#include "builds/build_manager.h"
#include "mcp/session.h"
#include "mcp/tools.h"
#include "platform/process_limits.h"

namespace trtwatch::mcp {

namespace asio = boost::asio;

namespace {

constexpr size_t kMaxLine = 4 << 20;  // no sane message is larger; the rest of such a line is skipped

int Usage(const std::string& message) {
  std::fprintf(stderr, "trtwatch mcp: %s\n", message.c_str());
  return 2;
}

// Splits stdin into lines on the event loop.
class LineReader {
 public:
  LineReader(asio::io_context& io, std::function<void(std::string_view)> on_line, std::function<void()> on_eof)
      : in_(io), on_line_(std::move(on_line)), on_eof_(std::move(on_eof)) {}

  bool Open(std::string* error) {
    boost::system::error_code ec;
    in_.assign(0, ec);  // fd 0: stdin
    if (ec) *error = "stdin cannot be read asynchronously (" + ec.message() + "); connect it to a pipe";
    return !ec;
  }
  void Start() {
    in_.async_read_some(asio::buffer(chunk_), [this](const boost::system::error_code& ec, size_t n) {
      for (size_t i = 0; i < n; ++i) {
        const char c = chunk_[i];
        if (c == '\n') {
          if (skipping_) {
            skipping_ = false;
            on_line_(std::string_view());  // reported as too long below
          } else {
            if (!line_.empty() && line_.back() == '\r') line_.pop_back();
            if (!line_.empty()) on_line_(line_);
          }
          line_.clear();
        } else if (!skipping_) {
          line_.push_back(c);
          if (line_.size() > kMaxLine) {
            skipping_ = true;
            line_.clear();
            line_.shrink_to_fit();
          }
        }
      }
      if (ec) return on_eof_();
      Start();
    });
  }
  void Close() {
    in_.release();  // stdin is not ours to close
  }

 private:
  asio::posix::stream_descriptor in_;
  std::function<void(std::string_view)> on_line_;
  std::function<void()> on_eof_;
  std::array<char, 65536> chunk_{};
  std::string line_;
  bool skipping_ = false;
};

}  // namespace

int RunStdioServer(asio::io_context& io, Tools& tools, builds::BuildManager& manager, const ServerInfo& info) {
  std::string error;
  IgnoreBrokenPipe();
  // No Recover(): builds a stopped `trtwatch serve` left running or queued are that
  // service's to recover when it starts again. None of its workers runs now: the store
  // refused the data dir if another process held it.
  bool out_open = true;
  bool stopping = false;
  std::function<void()> stop;
  Session session(tools, info, [&](const json& message, const json&) {
    if (!out_open) return;
    const std::string line = message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    if (std::fwrite(line.data(), 1, line.size(), stdout) != line.size() || std::fflush(stdout) != 0) {
      out_open = false;  // the client is gone
      asio::post(io, [&] { stop(); });
    }
  });
  LineReader reader(
      io,
      [&](std::string_view line) {
        if (line.empty()) {
          session.Receive(Message{Message::Kind::kInvalid, nullptr, "", json::object(),
                                  ErrorResponse(nullptr, rpc_error::kInvalidRequest,
                                                "invalid request: a message longer than 4 MiB was skipped")});
          return;
        }
        session.Receive(line);
      },
      [&] { stop(); });
  if (!reader.Open(&error)) return Usage(error);

  asio::signal_set signals(io, SIGTERM, SIGINT);
  stop = [&] {
    if (stopping) return;
    stopping = true;
    reader.Close();
    tools.CancelQueued("the MCP client disconnected before the build started");
    tools.Stop();
    boost::system::error_code ignored;
    signals.cancel(ignored);
    manager.Shutdown(/*cancel_running=*/true, [&] { io.stop(); });
  };
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) stop();
  });
  reader.Start();
  io.run();
  return 0;
}

}  // namespace trtwatch::mcp
