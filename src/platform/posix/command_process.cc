#include "platform/command_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace trtwatch {

CommandProcess::CommandProcess(int pid) : pid_(pid) {
#ifdef SYS_pidfd_open
  exit_fd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#endif
}

CommandProcess::~CommandProcess() {
  if (exit_fd_ >= 0) close(exit_fd_);
}

std::optional<CommandExit> CommandProcess::Poll() {
  if (exit_) return exit_;
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done != pid_) return std::nullopt;
  CommandExit ended;
  if (WIFEXITED(status)) {
    ended.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    ended.signal = WTERMSIG(status);
    ended.code = 128 + *ended.signal;
    const char* abbrev = sigabbrev_np(*ended.signal);
    ended.signal_name = abbrev != nullptr ? std::string("SIG") + abbrev : std::to_string(*ended.signal);
  }
  exit_ = ended;
  return exit_;
}

void CommandProcess::Interrupt() {
  if (!exit_) kill(-pid_, SIGINT);
}

CommandStart CommandStart::Run(const CommandSpec& spec) {
  if (spec.argv.empty()) return {nullptr, "no COMMAND was given", false};
  std::vector<char*> argv;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> env;
  for (const std::string& entry : spec.env) env.push_back(const_cast<char*>(entry.c_str()));
  env.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  pid_t pid = 0;
  const int failed = posix_spawnp(&pid, argv[0], nullptr, &attributes, argv.data(), env.data());
  posix_spawnattr_destroy(&attributes);
  if (failed != 0) {
    const bool not_found = failed == ENOENT;
    return {nullptr, spec.argv[0] + ": " + (not_found ? "command not found" : std::strerror(failed)), not_found};
  }
  return {std::unique_ptr<CommandProcess>(new CommandProcess(pid)), {}, false};
}

std::string CurrentExecutablePath() {
  std::error_code error;
  return std::filesystem::read_symlink("/proc/self/exe", error).string();
}

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) env.emplace_back(*entry);
  return env;
}

}  // namespace trtwatch
