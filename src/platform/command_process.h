// CommandProcess: the program `trtwatch run -- COMMAND` runs, in a process group of its
// own (so that Ctrl+C at the terminal reaches trtwatch, which decides what COMMAND
// gets), with its stdin, stdout and stderr those of trtwatch, untouched.
// Implementation: platform/posix/command_process.cc.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trtwatch {

struct CommandSpec {
  std::vector<std::string> argv;  // argv[0] is searched on PATH, as a shell does
  std::vector<std::string> env;   // "NAME=value", the whole environment
};

// How COMMAND ended, as a shell reports it: its exit code, or 128 + the signal.
struct CommandExit {
  int code = 0;
  std::optional<int> signal;
  std::string signal_name;  // "SIGKILL", for messages
};

struct CommandStart;

class CommandProcess {
 public:
  ~CommandProcess();  // does not wait: a still-running COMMAND is left as it is
  CommandProcess(const CommandProcess&) = delete;
  CommandProcess& operator=(const CommandProcess&) = delete;

  int pid() const { return pid_; }
  // A descriptor that becomes readable when COMMAND exits (a pidfd), to wait on
  // alongside others; -1 where the system has none (then poll on a timer).
  int exit_descriptor() const { return exit_fd_; }
  // Its end, once it has exited; never waits.
  [[nodiscard]] std::optional<CommandExit> Poll();
  // Sends SIGINT to COMMAND's process group.
  void Interrupt();

 private:
  friend struct CommandStart;
  explicit CommandProcess(int pid);
  int pid_;
  int exit_fd_ = -1;
  std::optional<CommandExit> exit_;
};

// Null with a message on failure; `not_found` says COMMAND was not found (exit 127, as a
// shell), otherwise it could not be run (126).
struct CommandStart {
  std::unique_ptr<CommandProcess> process;
  std::string error;
  bool not_found = false;
  [[nodiscard]] static CommandStart Run(const CommandSpec& spec);
};

// This program's own path (for the attach libraries beside it).
std::string CurrentExecutablePath();
// This process's environment, "NAME=value" each.
std::vector<std::string> CurrentEnvironment();

}  // namespace trtwatch
