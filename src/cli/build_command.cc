#include "cli/build_command.h"

#include <cstdio>
#include <memory>
#include <string>

namespace trtwatch {

namespace {

int UsageError(const std::string& message) {
  std::fprintf(stderr, "trtwatch build: %s\n", message.c_str());
  return exit_code::kUsage;
}

}  // namespace

int RunBuildCommand(const BuildCommandOptions& options) {
  BuildPlanOutcome outcome = MakeBuildPlan(options);
  if (!outcome.plan) return UsageError(outcome.error);
  BuildPlan& plan = *outcome.plan;
  for (const std::string& warning : plan.warnings) std::fprintf(stderr, "trtwatch build: warning: %s\n", warning.c_str());
  std::string error;
  std::unique_ptr<Runner> runner = Runner::Create(std::move(plan.run), &error);
  if (!runner) return UsageError(error);
  Backend& backend = *plan.backend;
  return runner->Run(backend.Describe(), [&](Monitor& monitor) { return backend.Build(monitor); }).exit_code;
}

}  // namespace trtwatch
