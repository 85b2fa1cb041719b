// LocalExecutor: workers as processes of this host, each in a process group of its own
// (platform/worker_process.h), the stream on its stdout and its diagnostics on stderr.
// The cooperative stop is SIGTERM, which `trtwatch build` turns into a cancel at the
// next step; the forced one SIGKILL to the group.
//
// Threading: as Executor (builds/executors/executor.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "builds/executors/executor.h"

namespace trtwatch::builds {

class LocalExecutor final : public Executor {
 public:
  // `exe`: the trtwatch program the workers run; `launcher`: the platform's
  // (NewWorkerLauncher) or a test's fake.
  LocalExecutor(std::unique_ptr<WorkerLauncher> launcher, std::string exe)
      : launcher_(std::move(launcher)), exe_(std::move(exe)) {}

  ExecutionStart Start(const WorkerTask& task, const std::vector<std::string>& args) override;
  void StopLeftover(const WorkerPlace& place) override;

 private:
  const std::unique_ptr<WorkerLauncher> launcher_;
  const std::string exe_;
};

}  // namespace trtwatch::builds
