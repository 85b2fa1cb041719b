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

#include "mcp/manager_builds.h"
#include "mcp/session.h"
#include "mcp/tools.h"
#include "platform/process_limits.h"
#include "service/build_manager.h"
#include "service/metrics.h"
#include "service/model_paths.h"
#include "service/record_store.h"

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

int RunStdioServer(const StdioOptions& options) {
  if (options.max_concurrent < 1) return Usage("--max-concurrent must be at least 1");
  if (options.queue_limit < 0) return Usage("--queue-limit must be 0 or more");
  std::string error;
  std::vector<std::string> roots;
  if (!service::CanonicalRoots(options.model_roots, &roots, &error)) return Usage(error);
  std::unique_ptr<service::RecordStore> store = service::RecordStore::Open(options.data_dir, &error);
  if (!store) return Usage(error);

  IgnoreBrokenPipe();
  asio::io_context io(1);
  service::Metrics metrics;
  service::ManagerOptions manager_options;
  manager_options.data_dir = options.data_dir;
  manager_options.model_roots = roots;
  manager_options.max_concurrent = options.max_concurrent;
  manager_options.queue_limit = options.queue_limit;
  auto manager = std::make_unique<service::BuildManager>(io, *store, metrics, manager_options);
  // No Recover(): builds a stopped `trtwatch serve` left running or queued are that
  // service's to recover when it starts again. None of its workers runs now: Open
  // refused the data dir if another process held it.
  ManagerBuilds builds(*manager, *store);
  ToolOptions tool_options;
  tool_options.max_build_seconds = options.max_build_seconds;
  tool_options.doctor = options.doctor;
  Tools tools(io, builds, tool_options);

  bool out_open = true;
  bool stopping = false;
  std::function<void()> stop;
  Session session(tools, ServerInfo{options.version, Instructions()}, [&](const json& message, const json&) {
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
    manager->Shutdown(/*cancel_running=*/true, [&] { io.stop(); });
  };
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) stop();
  });
  std::fprintf(stderr, "trtwatch mcp: serving MCP on stdio (records in %s)\n", options.data_dir.c_str());
  reader.Start();
  io.run();
  tools.Stop();
  manager.reset();  // workers and their pipes go before the event loop does
  return 0;
}

}  // namespace trtwatch::mcp
