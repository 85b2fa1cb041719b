// Plan: one concrete simulated build, drawn from a Profile with a seed. The same
// profile and seed always give the same plan (tree, step counts, durations).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backends/simulated/profile.h"

namespace trtwatch::sim {

struct PlanPhase {
  std::string name;
  int32_t steps = 0;
  int32_t workers = 1;
  std::vector<int64_t> step_us;                  // own work of each step
  std::vector<std::vector<PlanPhase>> children;  // phases run inside each step
  bool fails = false;                            // fails at `fail_step`
  int32_t fail_step = 0;
  int64_t total_us = 0;                          // its steps' and its children's work, serial
};

struct Plan {
  PlanPhase root;
  std::string failure_message;
  int64_t phase_count = 0;
  int64_t total_us = 0;  // serial work, before speed scaling and parallelism
};

Plan MakePlan(const Profile& profile, uint64_t seed);

}  // namespace trtwatch::sim
