#include "backends/simulated/plan.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace trtwatch::sim {

namespace {

class PlanMaker {
 public:
  PlanMaker(const Profile& profile, uint64_t seed)
      : profile_(profile), rng_(seed), variation_rng_(seed ^ kVariationStream) {
    build_factor_ = Factor(profile.variation.build);
  }

  Plan Make() {
    Plan plan;
    plan.root = Phase(profile_.root, 0);
    plan.failure_message = profile_.failure ? profile_.failure->message : "";
    plan.phase_count = phases_;
    plan.total_us = total_us_;
    return plan;
  }

 private:
  // The variation factors come from a stream of their own, so that a profile's tree
  // and step counts for a seed stay the same whatever its variation.
  static constexpr uint64_t kVariationStream = 0x9e3779b97f4a7c15;

  // e^(x·u), u uniform in [-1, 1] (53 random bits, portable across standard libraries).
  double Factor(double x) {
    if (x <= 0) return 1;
    const double u = static_cast<double>(variation_rng_() >> 11) / static_cast<double>(uint64_t{1} << 53);
    return std::exp(x * (2 * u - 1));
  }

  // Portable across standard libraries, unlike std::uniform_int_distribution.
  int64_t Draw(const Range& r) {
    if (r.high <= r.low) return r.low;
    const uint64_t span = static_cast<uint64_t>(r.high - r.low) + 1;
    return r.low + static_cast<int64_t>(rng_() % span);
  }

  static std::string Expand(const std::string& name, int32_t parent_step) {
    constexpr std::string_view kStep = "{step}";
    std::string out = name;
    for (size_t pos = out.find(kStep); pos != std::string::npos; pos = out.find(kStep, pos)) {
      const std::string value = std::to_string(parent_step);
      out.replace(pos, kStep.size(), value);
      pos += value.size();
    }
    return out;
  }

  PlanPhase Phase(const PhaseSpec& spec, int32_t parent_step) {
    ++phases_;
    PlanPhase phase;
    phase.name = Expand(spec.name, parent_step);
    phase.steps = static_cast<int32_t>(Draw(spec.steps));
    phase.workers = spec.workers;
    if (profile_.failure && !failure_placed_ && profile_.failure->phase == phase.name) {
      failure_placed_ = true;
      phase.fails = true;
      phase.fail_step = std::min(profile_.failure->step, phase.steps - 1);
    }
    phase.step_us.resize(phase.steps);
    phase.children.resize(phase.steps);
    const double factor = build_factor_ * Factor(profile_.variation.phase);
    for (int32_t step = 0; step < phase.steps; ++step) {
      int64_t us = Draw(spec.step_ms) * 1000;
      auto silent = spec.silent_ms.find(step);
      if (silent != spec.silent_ms.end()) us += Draw(silent->second) * 1000;
      us = std::llround(static_cast<double>(us) * factor);
      phase.step_us[step] = us;
      phase.total_us += us;
      total_us_ += us;
      for (const PhaseSpec& child : spec.children) {
        if (child.at && !Contains(*child.at, step)) continue;
        phase.children[step].push_back(Phase(child, step));
        phase.total_us += phase.children[step].back().total_us;
      }
    }
    return phase;
  }

  static bool Contains(const std::vector<int32_t>& steps, int32_t step) {
    for (int32_t s : steps) {
      if (s == step) return true;
    }
    return false;
  }

  const Profile& profile_;
  std::mt19937_64 rng_;
  std::mt19937_64 variation_rng_;
  double build_factor_ = 1;
  int64_t phases_ = 0;
  int64_t total_us_ = 0;
  bool failure_placed_ = false;
};

}  // namespace

Plan MakePlan(const Profile& profile, uint64_t seed) { return PlanMaker(profile, seed).Make(); }

}  // namespace trtwatch::sim
