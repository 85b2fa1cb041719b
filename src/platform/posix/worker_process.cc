#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "platform/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace trtwatch {

namespace {

namespace asio = boost::asio;

std::string SignalText(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return std::to_string(sig) + (abbrev ? std::string(" (SIG") + abbrev + ")" : std::string());
}

WorkerExit ExitFromStatus(int status) {
  WorkerExit exit;
  if (WIFEXITED(status)) exit.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
    exit.signal_text = SignalText(*exit.signal);
    exit.terminated = *exit.signal == SIGTERM;
  }
  return exit;
}

// argv and envp as exec wants them: pointers into `strings`, null-terminated.
std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

class PosixWorker final : public WorkerProcess {
 public:
  PosixWorker(asio::io_context& io, pid_t pid, int out_fd, int err_fd)
      : pid_(pid), out_(io, out_fd), err_(io, err_fd) {}
  ~PosixWorker() override {
    if (exit_) return;
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }

  int pid() const override { return pid_; }

  void ReadStdout(std::span<char> buffer, ReadHandler handler) override { Read(out_, buffer, std::move(handler)); }
  void ReadStderr(std::span<char> buffer, ReadHandler handler) override { Read(err_, buffer, std::move(handler)); }

  std::string ReadStderrNow(size_t max_bytes) override {
    std::string text;
    boost::system::error_code ec;
    err_.non_blocking(true, ec);
    std::array<char, 4096> chunk;
    while (!ec && text.size() < max_bytes) {
      const size_t n = err_.read_some(asio::buffer(chunk.data(), std::min(chunk.size(), max_bytes - text.size())), ec);
      if (n == 0) break;
      text.append(chunk.data(), n);
    }
    return text;
  }

  // Once reaped, the pid may belong to someone else: never signalled again.
  void Terminate() override {
    if (!exit_) kill(-pid_, SIGTERM);
  }
  void Kill() override {
    if (!exit_) kill(-pid_, SIGKILL);
  }

  std::optional<WorkerExit> Poll() override {
    if (!exit_) {
      int status = 0;
      const pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == 0) return std::nullopt;
      exit_ = r < 0 ? WorkerExit{} : ExitFromStatus(status);
    }
    return exit_;
  }

 private:
  static void Read(asio::posix::stream_descriptor& stream, std::span<char> buffer, ReadHandler handler) {
    stream.async_read_some(asio::buffer(buffer.data(), buffer.size()),
                           [handler = std::move(handler)](const boost::system::error_code& ec, size_t n) {
                             handler(n, static_cast<bool>(ec));
                           });
  }

  const pid_t pid_;
  asio::posix::stream_descriptor out_;
  asio::posix::stream_descriptor err_;
  std::optional<WorkerExit> exit_;  // set once waitpid reported its end
};

class PosixLauncher final : public WorkerLauncher {
 public:
  explicit PosixLauncher(asio::io_context& io) : io_(io) {}

  std::unique_ptr<WorkerProcess> Start(const WorkerSpec& spec, std::string* error) override {
    int out_pipe[2] = {-1, -1};
    int err_pipe[2] = {-1, -1};
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
      *error = "cannot start the worker (pipe: " + std::string(std::strerror(errno)) +
               "); the host is out of descriptors";
      for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
        if (fd >= 0) close(fd);
      }
      return nullptr;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);  // its own group: stop signals reach every process of the build
    // The service blocks and handles signals of its own; the worker starts with none
    // blocked and the defaults for those it handles.
    sigset_t empty, defaults;
    sigemptyset(&empty);
    sigemptyset(&defaults);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD}) sigaddset(&defaults, sig);
    posix_spawnattr_setsigmask(&attr, &empty);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::vector<std::string> args = spec.argv;
    std::vector<std::string> env = spec.env.value_or(std::vector<std::string>());
    const std::vector<char*> argv = CStrings(args);
    const std::vector<char*> envp = CStrings(env);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, spec.exe.c_str(), &actions, &attr, argv.data(),
                               spec.env ? envp.data() : environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (rc != 0) {
      close(out_pipe[0]);
      close(err_pipe[0]);
      *error = "cannot start the worker " + spec.exe + ": " + std::strerror(rc);
      return nullptr;
    }
    return std::make_unique<PosixWorker>(io_, pid, out_pipe[0], err_pipe[0]);
  }

  // A leftover worker keeps building until its next write hits the closed pipe, which
  // may be minutes in a silent phase; /proc says whether the pid is still one.
  void KillLeftover(int pid) override {
    if (pid <= 0) return;
    std::FILE* stat = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
    if (!stat) return;
    char buf[512] = {};
    const size_t n = std::fread(buf, 1, sizeof buf - 1, stat);
    std::fclose(stat);
    const char* after_name = std::strrchr(buf, ')');
    int pgrp = 0;
    char state = 0;
    int ppid = 0;
    if (n == 0 || !after_name || std::sscanf(after_name + 1, " %c %d %d", &state, &ppid, &pgrp) != 3 || pgrp != pid) {
      return;
    }
    std::FILE* cmd = std::fopen(("/proc/" + std::to_string(pid) + "/cmdline").c_str(), "r");
    if (!cmd) return;
    char args[256] = {};
    const size_t m = std::fread(args, 1, sizeof args - 1, cmd);
    std::fclose(cmd);
    const std::string argv0(args);
    const size_t arg1 = argv0.size() + 1;
    if (argv0 != "trtwatch" || arg1 >= m || std::string(args + arg1) != "build") return;
    kill(-pid, SIGKILL);
  }

 private:
  asio::io_context& io_;
};

}  // namespace

std::unique_ptr<WorkerLauncher> NewWorkerLauncher(asio::io_context& io) { return std::make_unique<PosixLauncher>(io); }

}  // namespace trtwatch
