// The build plan `trtwatch build` and `trtwatch cache key` share: what the options pick
// (backend, key recipe, run options) and the errors that name the flag and the fix, all
// before anything runs. Simulated builds only: the TensorRT side is tests/e2e's.
#include "runner/build_plan.h"

#include <gtest/gtest.h>

namespace trtwatch {
namespace {

BuildPlanOptions Simulated() {
  BuildPlanOptions options;
  options.simulate = "small-cnn";
  options.no_history = true;
  options.no_engine_cache = true;
  return options;
}

TEST(BuildPlanTest, ASimulatedBuildHasItsBackendKeyRecipeAndLimits) {
  BuildPlanOptions options = Simulated();
  options.timeout = "90s";
  options.stall_timeout = "2m";
  options.stall_action = "cancel";
  options.progress = "json";
  BuildPlanOutcome outcome = MakeBuildPlan(options);
  ASSERT_TRUE(outcome.plan) << outcome.error;
  const BuildPlan& plan = *outcome.plan;
  EXPECT_EQ(plan.backend->Describe().backend, "simulated");
  ASSERT_TRUE(plan.run.key_recipe.has_value());
  EXPECT_TRUE(plan.run.key_recipe->recipe.has_value());
  EXPECT_EQ(plan.run.timeout, 90.0);
  EXPECT_EQ(plan.run.stall_timeout, 120.0);
  EXPECT_TRUE(plan.run.cancel_on_stall);
  EXPECT_EQ(plan.run.output.progress, "json");
  EXPECT_FALSE(plan.run.engine_cache.has_value());
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(BuildPlanTest, TheKeyIsTheOnePlannedBuildsUse) {
  const keys::KeyOutcome first = BuildKeyFor(Simulated());
  const keys::KeyOutcome again = BuildKeyFor(Simulated());
  ASSERT_TRUE(first.key) << first.error;
  ASSERT_TRUE(again.key);
  EXPECT_EQ(first.key->digest, again.key->digest);
  BuildPlanOptions faster = Simulated();
  faster.speed = 4;
  const keys::KeyOutcome other = BuildKeyFor(faster);
  ASSERT_TRUE(other.key);
  EXPECT_NE(other.key->digest, first.key->digest);
}

TEST(BuildPlanTest, BadOptionsNameTheFlagAndTheFix) {
  struct Case {
    void (*edit)(BuildPlanOptions&);
    const char* expected;
  };
  const Case cases[] = {
      {[](BuildPlanOptions& o) { o.model = "net.onnx"; }, "give either a model or --simulate PROFILE, not both"},
      {[](BuildPlanOptions& o) { o.speed = 0; }, "--speed must be greater than zero"},
      {[](BuildPlanOptions& o) { o.timeout = "soon"; }, "--timeout: "},
      {[](BuildPlanOptions& o) { o.kill_after = "later"; }, "--kill-after: "},
      {[](BuildPlanOptions& o) { o.stall_action = "panic"; }, "--stall-action must be warn or cancel"},
      {[](BuildPlanOptions& o) {
         o.no_engine_cache = false;
         o.engine_cache = "/tmp/cache";
       },
       "--engine-cache: a simulated build writes no engine to keep"},
      {[](BuildPlanOptions& o) {
         o.no_engine_cache = false;
         o.engine_cache_max_size = "lots";
       },
       "--engine-cache-max-size: \"lots\" is not a positive size"},
  };
  for (const Case& c : cases) {
    BuildPlanOptions options = Simulated();
    c.edit(options);
    const BuildPlanOutcome outcome = MakeBuildPlan(options);
    EXPECT_FALSE(outcome.plan.has_value()) << c.expected;
    EXPECT_NE(outcome.error.find(c.expected), std::string::npos) << outcome.error;
  }
}

TEST(BuildPlanTest, NoModelAndNoProfileSaysWhatToGive) {
  BuildPlanOptions options;
  options.no_history = true;
  const BuildPlanOutcome outcome = MakeBuildPlan(options);
  EXPECT_FALSE(outcome.plan.has_value());
  EXPECT_NE(outcome.error.find("nothing to build"), std::string::npos) << outcome.error;
}

}  // namespace
}  // namespace trtwatch
