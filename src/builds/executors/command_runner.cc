#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "builds/executors/command_runner.h"

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdlib>
#include <filesystem>

#include "protocol/utf8.h"

namespace trtwatch::builds {

namespace asio = boost::asio;

struct CommandRunner::Command {
  std::unique_ptr<WorkerProcess> process;
  Done done;
  std::array<char, 4096> out_chunk{};
  std::array<char, 4096> err_chunk{};
  CommandResult result;
  bool out_closed = false;
  bool err_closed = false;
  std::unique_ptr<asio::steady_timer> poll;   // for its exit, once its output is read
  std::unique_ptr<asio::steady_timer> limit;  // its time limit
};

std::string CommandResult::Describe(const std::string& command) const {
  std::string text = "`" + command + "` ";
  if (!ran) return text + error;
  text += exit_code ? "exited with code " + std::to_string(*exit_code) : "was killed by a signal";
  std::string why = err.empty() ? out : err;
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  if (!why.empty()) text += ": " + ValidBoundedText(why, 1024);
  return text;
}

std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    dirs.remove_prefix(colon == std::string_view::npos ? dirs.size() : colon + 1);
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    std::error_code ec;
    const auto perms = std::filesystem::status(candidate, ec).permissions();
    if (!ec && std::filesystem::is_regular_file(candidate, ec) &&
        (perms & std::filesystem::perms::owner_exec) != std::filesystem::perms::none) {
      return candidate.string();
    }
  }
  return {};
}

CommandRunner::CommandRunner(asio::io_context& io, std::unique_ptr<WorkerLauncher> launcher, size_t max_output,
                             std::chrono::milliseconds time_limit)
    : io_(io), launcher_(std::move(launcher)), max_output_(max_output), time_limit_(time_limit) {}

CommandRunner::~CommandRunner() { *alive_ = false; }  // running_ goes next: each process is killed and reaped

void CommandRunner::Run(std::vector<std::string> argv, Done done) {
  auto c = std::make_shared<Command>();
  c->done = std::move(done);
  WorkerSpec spec;
  spec.exe = FindProgram(argv.front());
  spec.argv = std::move(argv);
  std::string error;
  if (!spec.exe.empty()) c->process = launcher_->Start(spec, &error);
  if (!c->process) {
    c->result.error = spec.exe.empty() ? "is not on PATH; install Slurm's client commands (slurm-client)"
                                       : "could not start: " + error;
    asio::post(io_, [alive = alive_, c] {
      if (*alive) c->done(c->result);
    });
    return;
  }
  c->poll = std::make_unique<asio::steady_timer>(io_);
  c->limit = std::make_unique<asio::steady_timer>(io_);
  c->limit->expires_after(time_limit_);
  c->limit->async_wait([this, alive = alive_, c](const boost::system::error_code& ec) {
    if (ec || !*alive || !c->process) return;
    CommandResult result;
    result.error = "ran past its " + std::to_string(time_limit_.count()) + " ms limit and was killed";
    Complete(c, std::move(result));  // dropping the process kills and reaps it
  });
  running_.push_back(c);
  Read(c, /*out=*/true);
  Read(c, /*out=*/false);
}

void CommandRunner::Read(const std::shared_ptr<Command>& c, bool out) {
  std::array<char, 4096>& chunk = out ? c->out_chunk : c->err_chunk;
  auto handler = [this, alive = alive_, c, out](size_t n, bool closed) {
    if (!*alive || !c->process) return;
    std::string& text = out ? c->result.out : c->result.err;
    const std::array<char, 4096>& got = out ? c->out_chunk : c->err_chunk;
    text.append(got.data(), std::min(n, max_output_ - std::min(max_output_, text.size())));  // the rest is dropped
    if (!closed) return Read(c, out);
    (out ? c->out_closed : c->err_closed) = true;
    MaybeFinish(c);
  };
  if (out) {
    c->process->ReadStdout(chunk, std::move(handler));
  } else {
    c->process->ReadStderr(chunk, std::move(handler));
  }
}

void CommandRunner::MaybeFinish(const std::shared_ptr<Command>& c) {
  if (!c->out_closed || !c->err_closed || !c->process) return;
  if (std::optional<WorkerExit> exit = c->process->Poll()) {
    CommandResult result = std::move(c->result);
    result.ran = true;
    result.exit_code = exit->code;
    return Complete(c, std::move(result));
  }
  c->poll->expires_after(std::chrono::milliseconds(5));
  c->poll->async_wait([this, alive = alive_, c](const boost::system::error_code& ec) {
    if (!ec && *alive) MaybeFinish(c);
  });
}

void CommandRunner::Complete(const std::shared_ptr<Command>& c, CommandResult result) {
  std::erase(running_, c);
  c->process.reset();
  c->limit->cancel();
  c->poll->cancel();
  Done done = std::exchange(c->done, nullptr);
  done(result);
}

}  // namespace trtwatch::builds
