// The composition root of `serve` and `mcp` (app/builds_root.h): what it refuses before
// it opens anything, one root per data dir, and the objects it assembles.
#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "app/builds_root.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>

#include "support/temp_dir_test.h"

namespace trtwatch::app {
namespace {

class BuildsRootTest : public testing::TempDirTest {
 protected:
  builds::BuildsConfig Config() const {
    builds::BuildsConfig config;
    config.data_dir = dir_ + "/data";
    return config;
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_ + "/data");
    TempDirTest::TearDown();
  }
  boost::asio::io_context io_{1};
};

TEST_F(BuildsRootTest, BadLimitsAreRefusedNamingTheFlagBeforeAnythingIsCreated) {
  builds::BuildsConfig config = Config();
  config.max_concurrent = -1;  // 0: one build per GPU slot (builds/builds_config.h)
  BuildsRoot::Opening opening = BuildsRoot::Open(io_, config);
  EXPECT_EQ(opening.root, nullptr);
  EXPECT_NE(opening.error.find("--max-concurrent"), std::string::npos) << opening.error;
  config.max_concurrent = 1;
  config.queue_limit = -1;
  opening = BuildsRoot::Open(io_, config);
  EXPECT_NE(opening.error.find("--queue-limit"), std::string::npos) << opening.error;
  EXPECT_FALSE(std::filesystem::exists(config.data_dir)) << "a refused start leaves no data dir behind";
}

TEST_F(BuildsRootTest, AModelRootThatIsNotThereIsRefusedNamingIt) {
  builds::BuildsConfig config = Config();
  config.model_roots = {dir_ + "/no-such-models"};
  const BuildsRoot::Opening opening = BuildsRoot::Open(io_, config);
  EXPECT_EQ(opening.root, nullptr);
  EXPECT_NE(opening.error.find("no-such-models"), std::string::npos) << opening.error;
}

TEST_F(BuildsRootTest, OneRootPerDataDirTheSecondNamesTheHolder) {
  BuildsRoot::Opening first = BuildsRoot::Open(io_, Config());
  ASSERT_NE(first.root, nullptr) << first.error;
  const BuildsRoot::Opening second = BuildsRoot::Open(io_, Config());
  EXPECT_EQ(second.root, nullptr);
  EXPECT_NE(second.error.find("PID " + std::to_string(::getpid())), std::string::npos) << second.error;
  first.root.reset();
  EXPECT_NE(BuildsRoot::Open(io_, Config()).root, nullptr) << "free again once the first is gone";
}

TEST_F(BuildsRootTest, TheManagerAndTheToolsWorkOnTheStoreItOpened) {
  BuildsRoot::Opening opening = BuildsRoot::Open(io_, Config());
  ASSERT_NE(opening.root, nullptr) << opening.error;
  BuildsRoot& root = *opening.root;
  ASSERT_TRUE(root.store().Put("b1", "succeeded", R"({"id":"b1","status":"succeeded"})").ok());
  EXPECT_EQ(root.manager().Get("b1").outcome, builds::GetOutcome::kFound);
  EXPECT_EQ(root.manager().Get("nope").outcome, builds::GetOutcome::kNotFound);
  EXPECT_EQ(root.manager().running(), 0);
  EXPECT_TRUE(std::filesystem::is_directory(root.manager().engine_dir()));
}

}  // namespace
}  // namespace trtwatch::app
