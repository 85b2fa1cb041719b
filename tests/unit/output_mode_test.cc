#include "runner/output_mode.h"

#include <gtest/gtest.h>

#include <map>

#include "support/env_map.h"

namespace trtwatch {
namespace {

using testing::EnvOf;

std::optional<OutputMode> Resolve(const std::string& progress, const std::map<std::string, std::string>& env,
                                  bool tty, std::string* error = nullptr, const std::string& color = "auto") {
  std::string ignored;
  return ResolveOutputMode(OutputFlags{progress, color}, EnvOf(env), tty, error ? error : &ignored);
}

const std::map<std::string, std::string> kTerminal = {{"TERM", "xterm-256color"}, {"LANG", "en_US.UTF-8"}};

TEST(OutputModeTest, AutoPicksTtyOnlyForASmartInteractiveTerminal) {
  EXPECT_EQ(Resolve("auto", kTerminal, true)->progress, ProgressMode::kTty);
  EXPECT_EQ(Resolve("auto", kTerminal, false)->progress, ProgressMode::kPlain);
  EXPECT_EQ(Resolve("auto", {{"TERM", "dumb"}}, true)->progress, ProgressMode::kPlain);
  EXPECT_EQ(Resolve("auto", {}, true)->progress, ProgressMode::kPlain);  // TERM unset
  EXPECT_EQ(Resolve("auto", {{"TERM", ""}}, true)->progress, ProgressMode::kPlain);
}

TEST(OutputModeTest, AutoIsPlainUnderCi) {
  auto env = kTerminal;
  env["CI"] = "true";
  EXPECT_EQ(Resolve("auto", env, true)->progress, ProgressMode::kPlain);
  env.erase("CI");
  env["TF_BUILD"] = "True";
  EXPECT_EQ(Resolve("auto", env, true)->progress, ProgressMode::kPlain);
  env["TF_BUILD"] = "false";  // an explicit "not CI"
  EXPECT_EQ(Resolve("auto", env, true)->progress, ProgressMode::kTty);
}

TEST(OutputModeTest, ExplicitModesAreTaken) {
  EXPECT_EQ(Resolve("plain", kTerminal, true)->progress, ProgressMode::kPlain);
  EXPECT_EQ(Resolve("json", kTerminal, true)->progress, ProgressMode::kJson);
  EXPECT_EQ(Resolve("quiet", kTerminal, false)->progress, ProgressMode::kQuiet);
  auto env = kTerminal;
  env["CI"] = "1";
  EXPECT_EQ(Resolve("tty", env, true)->progress, ProgressMode::kTty);  // forced: CI does not matter
}

TEST(OutputModeTest, ForcedTtyOnANonTerminalIsAnError) {
  std::string error;
  EXPECT_FALSE(Resolve("tty", kTerminal, false, &error));
  EXPECT_NE(error.find("--progress tty"), std::string::npos);
  EXPECT_NE(error.find("not"), std::string::npos);
  EXPECT_NE(error.find("--progress plain"), std::string::npos);

  auto env = kTerminal;
  env["TRTWATCH_PROGRESS"] = "tty";
  EXPECT_FALSE(Resolve("auto", env, false, &error));
  EXPECT_NE(error.find("TRTWATCH_PROGRESS=tty"), std::string::npos);
}

TEST(OutputModeTest, VariableAppliesOnlyWhileTheFlagIsAuto) {
  auto env = kTerminal;
  env["TRTWATCH_PROGRESS"] = "json";
  EXPECT_EQ(Resolve("auto", env, true)->progress, ProgressMode::kJson);
  EXPECT_EQ(Resolve("plain", env, true)->progress, ProgressMode::kPlain);
  env["TRTWATCH_PROGRESS"] = "";  // empty: as if unset
  EXPECT_EQ(Resolve("auto", env, true)->progress, ProgressMode::kTty);
  env["TRTWATCH_PROGRESS"] = "fancy";
  std::string error;
  EXPECT_FALSE(Resolve("auto", env, true, &error));
  EXPECT_NE(error.find("TRTWATCH_PROGRESS"), std::string::npos);
  EXPECT_NE(error.find("fancy"), std::string::npos);
  EXPECT_EQ(Resolve("quiet", env, true)->progress, ProgressMode::kQuiet);  // ignored when not auto
}

TEST(OutputModeTest, BadFlagsNameTheirValues) {
  std::string error;
  EXPECT_FALSE(Resolve("rawjson", kTerminal, true, &error));
  EXPECT_NE(error.find("\"rawjson\""), std::string::npos);
  EXPECT_FALSE(Resolve("auto", kTerminal, true, &error, "sometimes"));
  EXPECT_NE(error.find("--color"), std::string::npos);
}

TEST(OutputModeTest, ColourRules) {
  EXPECT_TRUE(Resolve("auto", kTerminal, true)->color);
  auto env = kTerminal;
  env["NO_COLOR"] = "1";
  EXPECT_FALSE(Resolve("auto", env, true)->color);
  EXPECT_TRUE(Resolve("auto", env, true, nullptr, "always")->color);  // the flag overrides
  env["NO_COLOR"] = "";                                                // empty: not set
  EXPECT_TRUE(Resolve("auto", env, true)->color);
  env["NO_COLOR"] = "1";
  env["FORCE_COLOR"] = "1";
  EXPECT_FALSE(Resolve("auto", env, true)->color);  // NO_COLOR wins over the forcing variables
  EXPECT_FALSE(Resolve("auto", kTerminal, true, nullptr, "never")->color);

  // A forcing variable colours a tty view on a terminal that is not "smart".
  EXPECT_TRUE(Resolve("tty", {{"TERM", "dumb"}, {"CLICOLOR_FORCE", "1"}}, true)->color);
  EXPECT_FALSE(Resolve("tty", {{"TERM", "dumb"}, {"CLICOLOR_FORCE", "0"}}, true)->color);
  EXPECT_FALSE(Resolve("tty", {{"TERM", "dumb"}}, true)->color);
}

TEST(OutputModeTest, OnlyTheTtyViewIsColoured) {
  EXPECT_FALSE(Resolve("plain", kTerminal, true, nullptr, "always")->color);
  EXPECT_FALSE(Resolve("json", {{"FORCE_COLOR", "1"}}, false)->color);
  EXPECT_FALSE(Resolve("auto", {{"FORCE_COLOR", "1"}}, false)->color);  // a pipe: plain, no colour
}

TEST(OutputModeTest, UnicodeFollowsTheLocale) {
  EXPECT_TRUE(Resolve("auto", kTerminal, true)->unicode);
  EXPECT_FALSE(Resolve("auto", {{"TERM", "xterm"}, {"LANG", "C"}}, true)->unicode);
  EXPECT_TRUE(Resolve("auto", {{"TERM", "xterm"}, {"LANG", "C"}, {"LC_ALL", "C.utf8"}}, true)->unicode);
  EXPECT_FALSE(Resolve("auto", {{"TERM", "xterm"}, {"LANG", "en_US.UTF-8"}, {"LC_ALL", "POSIX"}}, true)->unicode);
}

}  // namespace
}  // namespace trtwatch
