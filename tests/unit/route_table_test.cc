// The API's route table (service/route_table.h): which path reaches which endpoint with
// which ids, who may call it, and that every answered route has its handler.
#include "service/route_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "service/api_answer.h"
#include "service/assets.h"
#include "service/ui_routes.h"

namespace trtwatch::service {
namespace {

struct Case {
  const char* path;
  Endpoint endpoint;
  const char* id;
  const char* file;
};

TEST(RouteTableTest, PathsReachTheirEndpointsWithTheirIds) {
  const Case cases[] = {
      {"/healthz", Endpoint::kHealth, "", ""},
      {"/metrics", Endpoint::kMetrics, "", ""},
      {"/openapi.json", Endpoint::kOpenApi, "", ""},
      {"/mcp", Endpoint::kMcp, "", ""},
      {"/builds", Endpoint::kBuilds, "", ""},
      {"/builds/changes", Endpoint::kBuildChanges, "", ""},
      {"/builds/b_1", Endpoint::kBuild, "b_1", ""},
      {"/builds/", Endpoint::kBuild, "", ""},  // the build handler answers an empty id with its own 404
      {"/builds/b_1/cancel", Endpoint::kBuildCancel, "b_1", ""},
      {"/builds/changes/cancel", Endpoint::kBuildCancel, "changes", ""},
      {"/builds/b_1/events", Endpoint::kBuildEvents, "b_1", ""},
      {"/builds/b_1/trace", Endpoint::kBuildTrace, "b_1", ""},
      {"/builds/b_1/engine", Endpoint::kBuildEngine, "b_1", ""},
      {"/builds/b_1/timing-cache", Endpoint::kBuildTimingCache, "b_1", ""},
      {"/builds/b_1/compare", Endpoint::kBuildCompare, "b_1", ""},
      {"/history", Endpoint::kHistory, "", ""},
      {"/history/report", Endpoint::kHistoryReport, "", ""},
      {"/audit", Endpoint::kAudit, "", ""},
      {"/models", Endpoint::kModels, "", ""},
      {"/models/resnet", Endpoint::kModel, "resnet", ""},
      {"/models/", Endpoint::kModel, "", ""},  // the name rule answers it with 400
      {"/models/resnet/weights.bin", Endpoint::kModelFile, "resnet", "weights.bin"},
      {"/groups/g_1", Endpoint::kGroup, "g_1", ""},
      {"/groups/g_1/cancel", Endpoint::kGroupCancel, "g_1", ""},
      {"/groups/g_1/manifest", Endpoint::kGroupManifest, "g_1", ""},
      {"/groups/g_1/engines/a.engine", Endpoint::kGroupEngine, "g_1", "a.engine"},
      // No route: a group needs its id, and every segment counts.
      {"/groups/", Endpoint::kNotFound, "", ""},
      {"/groups//cancel", Endpoint::kNotFound, "", ""},
      {"/groups/g_1/x", Endpoint::kNotFound, "", ""},
      {"/builds/b_1/", Endpoint::kNotFound, "", ""},
      {"/builds/b_1/logs", Endpoint::kNotFound, "", ""},
      {"/models/a/b/c", Endpoint::kNotFound, "", ""},
      {"//builds", Endpoint::kNotFound, "", ""},
      {"/healthz/", Endpoint::kNotFound, "", ""},
      {"builds", Endpoint::kNotFound, "", ""},
      {"", Endpoint::kNotFound, "", ""},
      {"/", Endpoint::kNotFound, "", ""},
      // The dashboard's paths are no API route: the connection serves them without a token.
      {"/index.html", Endpoint::kNotFound, "", ""},
      {"/ui/session", Endpoint::kNotFound, "", ""},
      {"/ui/main.js", Endpoint::kNotFound, "", ""},
      {"/ui/builds/b_1", Endpoint::kNotFound, "", ""},
  };
  for (const Case& c : cases) {
    const Route route = RouteOf(c.path);
    EXPECT_EQ(route.endpoint, c.endpoint) << c.path;
    EXPECT_EQ(route.id, c.id) << c.path;
    EXPECT_EQ(route.file, c.file) << c.path;
  }
}

TEST(RouteTableTest, NoDashboardFileIsAnApiRoute) {
  for (const EmbeddedFile& file : DashboardFiles()) {
    const std::string path = "/ui/" + std::string(file.name);
    ASSERT_TRUE(UiAssetFor(path).has_value()) << path;
    EXPECT_EQ(RouteOf(path).endpoint, Endpoint::kNotFound) << path;
  }
}

TEST(RouteTableTest, OnlyHealthIsPublic) {
  for (const RouteEntry& entry : Routes()) {
    EXPECT_EQ(entry.access, entry.endpoint == Endpoint::kHealth ? Access::kPublic : Access::kToken) << entry.pattern;
  }
}

TEST(RouteTableTest, EveryEndpointHasOneEntryThatItsOwnPatternReaches) {
  std::set<Endpoint> seen;
  for (const RouteEntry& entry : Routes()) {
    EXPECT_TRUE(seen.insert(entry.endpoint).second) << entry.pattern;
    EXPECT_EQ(EntryOf(entry.endpoint), &entry);
    EXPECT_EQ(RouteOf(entry.pattern).endpoint, entry.endpoint) << entry.pattern;  // a pattern fits itself
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(Endpoint::kNotFound));
  EXPECT_EQ(EntryOf(Endpoint::kNotFound), nullptr);
}

TEST(ApiAnswerTest, SetReplacesAFieldOfTheSameNameAndKeepsTheOrder) {
  ApiAnswer answer = MethodNotAllowed("GET, POST");
  EXPECT_EQ(answer.status, 405);
  answer.Set("content-type", "text/plain");
  ASSERT_EQ(answer.headers.size(), 3u);
  EXPECT_EQ(answer.headers[0].second, "text/plain");
  EXPECT_EQ(answer.headers[1].first, "Cache-Control");
  EXPECT_EQ(answer.headers[2], (std::pair<std::string, std::string>{"Allow", "GET, POST"}));
  EXPECT_NE(answer.body.find("use GET, POST"), std::string::npos) << answer.body;
}

}  // namespace
}  // namespace trtwatch::service
