// CommandRunner: runs a cluster's commands (sbatch, scontrol, scancel) on the event loop
// without blocking it: each is a process started by a WorkerLauncher
// (platform/worker_process.h; a fake one in tests), its output read as it comes —
// bounded, since it is untrusted — and its end reported once to a callback. A command
// that runs past its time limit is killed and reported as such.
//
// Threading: as WorkerLauncher (one event-loop thread); callbacks run on it. Dropping
// the runner kills the commands still running and calls no callback.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "platform/worker_process.h"

namespace boost::asio {
class io_context;
}

namespace trtwatch::builds {

struct CommandResult {
  bool ran = false;              // false: it could not start, or it ran past its limit (`error` says which)
  std::optional<int> exit_code;  // its exit code (none if a signal ended it)
  std::string out;               // stdout, up to the runner's bound
  std::string err;               // stderr, up to the runner's bound
  std::string error;

  bool ok() const { return ran && exit_code == 0; }
  // For messages: "`cmd` exited with code N: <stderr>" or the error.
  std::string Describe(const std::string& command) const;
};

class CommandRunner {
 public:
  using Done = std::function<void(const CommandResult&)>;

  CommandRunner(boost::asio::io_context& io, std::unique_ptr<WorkerLauncher> launcher, size_t max_output,
                std::chrono::milliseconds time_limit);
  ~CommandRunner();
  CommandRunner(const CommandRunner&) = delete;
  CommandRunner& operator=(const CommandRunner&) = delete;

  // Runs argv (argv[0] found on PATH unless it names a path); `done` runs once, later.
  void Run(std::vector<std::string> argv, Done done);

 private:
  struct Command;
  void Read(const std::shared_ptr<Command>& c, bool out);
  void MaybeFinish(const std::shared_ptr<Command>& c);
  void Complete(const std::shared_ptr<Command>& c, CommandResult result);

  boost::asio::io_context& io_;
  const std::unique_ptr<WorkerLauncher> launcher_;
  const size_t max_output_;
  const std::chrono::milliseconds time_limit_;
  std::vector<std::shared_ptr<Command>> running_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // false once dropped: late handlers do nothing
};

// `name` as an absolute path: itself if it has a '/', else the first executable of that
// name on PATH; empty if none.
std::string FindProgram(const std::string& name);

}  // namespace trtwatch::builds
