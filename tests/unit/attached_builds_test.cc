// AttachedBuilds (runner/attached_builds.h): the messages of attached programs become
// numbered builds of their own, each with its runner, file and result; cancels travel
// back once; COMMAND's end closes what is open.
#include "runner/attached_builds.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "runner/attached_run.h"
#include "support/temp_dir_test.h"

namespace trtwatch {
namespace {

Event Start(const std::string& id) {
  Event event;
  event.type = EventType::kBuildStart;
  event.build = id;
  event.backend = "tensorrt";
  event.model = "buildSerializedNetwork";
  return event;
}

Event Phase(EventType type, int64_t id, const std::string& name, int32_t total = 0, int32_t step = 0) {
  Event event;
  event.type = type;
  event.id = id;
  event.phase = name;
  event.total = total;
  event.step = step;
  return event;
}

Event Finish(BuildStatus status) {
  Event event;
  event.type = EventType::kBuildFinish;
  event.status = status;
  return event;
}

std::string Message(int pid, int build, const Event& event) {
  return std::to_string(pid) + " " + std::to_string(build) + " " + EventToJson(event);
}

class AttachedBuildsTest : public testing::TempDirTest {
 protected:
  AttachedBuilds Make() {
    return AttachedBuilds(
        [this](int number, const Event&) {
          RunOptions options;
          options.output = OutputFlags{"quiet", "never"};
          options.events_file = dir_ + "/" + std::to_string(number) + ".jsonl";
          options.handle_signals = false;
          options.stderr_is_terminal = false;
          return options;
        },
        [this](int pid, int build) { cancels.emplace_back(pid, build); });
  }
  std::string Events(int number) { return Read(dir_ + "/" + std::to_string(number) + ".jsonl"); }
  std::vector<std::pair<int, int>> cancels;
};

TEST_F(AttachedBuildsTest, EachProcessBuildIsANumberedBuildWithItsOwnStream) {
  AttachedBuilds builds = Make();
  builds.OnMessage(Message(100, 1, Start("a")));
  builds.OnMessage(Message(200, 1, Start("b")));
  builds.OnMessage(Message(200, 1, Phase(EventType::kPhaseStart, 1, "Building engine", 2)));
  builds.OnMessage(Message(200, 1, Phase(EventType::kStep, 1, "Building engine", 0, 0)));
  builds.OnMessage(Message(200, 1, Phase(EventType::kPhaseFinish, 1, "Building engine")));
  builds.OnMessage(Message(200, 1, Finish(BuildStatus::kSucceeded)));
  builds.OnMessage(Message(100, 1, Finish(BuildStatus::kFailed)));
  EXPECT_EQ(builds.started(), 2);
  EXPECT_NE(Events(1).find("\"status\":\"failed\""), std::string::npos);
  EXPECT_NE(Events(2).find("Building engine"), std::string::npos);
  EXPECT_NE(Events(2).find("\"status\":\"succeeded\""), std::string::npos);
  EXPECT_FALSE(builds.ExitCodeOverride());
}

TEST_F(AttachedBuildsTest, MalformedMessagesAreIgnored) {
  AttachedBuilds builds = Make();
  for (const char* bad : {"", "12", "x 1 {}", "1 2 not json", "1 2 {\"type\":\"nonsense\"}"}) builds.OnMessage(bad);
  builds.OnMessage(Message(1, 1, Finish(BuildStatus::kSucceeded)));  // of no started build
  EXPECT_EQ(builds.started(), 0);
}

TEST_F(AttachedBuildsTest, CtrlCCancelsEveryBuildOnceAndTheRunExits130) {
  AttachedBuilds builds = Make();
  builds.OnMessage(Message(100, 3, Start("a")));
  EXPECT_TRUE(builds.CancelAll(CancelReason::kSignal, "Ctrl+C", "cancelling"));
  builds.ForwardCancels();
  EXPECT_EQ(cancels, (std::vector<std::pair<int, int>>{{100, 3}}));
  builds.OnMessage(Message(100, 3, Finish(BuildStatus::kFailed)));
  EXPECT_EQ(builds.ExitCodeOverride(), exit_code::kInterrupted);
  EXPECT_FALSE(builds.CancelAll(CancelReason::kSignal, "Ctrl+C", "cancelling"));  // none left
}

TEST_F(AttachedBuildsTest, ABuildOpenWhenCommandEndsEndsFailedWithTheReason) {
  AttachedBuilds builds = Make();
  builds.OnMessage(Message(100, 1, Start("a")));
  builds.EndAll("the program ended during the build (it was killed by SIGKILL)");
  EXPECT_NE(Events(1).find("killed by SIGKILL"), std::string::npos);
  EXPECT_NE(Events(1).find("\"status\":\"failed\""), std::string::npos);
}

TEST(NumberedFile, BraceNIsTheNumberElseLaterBuildsGetASuffix) {
  EXPECT_EQ(NumberedFile("b-{n}.jsonl", 3), "b-3.jsonl");
  EXPECT_EQ(NumberedFile("e.jsonl", 1), "e.jsonl");
  EXPECT_EQ(NumberedFile("e.jsonl", 2), "e.jsonl.2");
  EXPECT_EQ(NumberedFile("", 2), "");
}

}  // namespace
}  // namespace trtwatch
