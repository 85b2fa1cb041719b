// The API's route table (service/route_table.h): which path reaches which endpoint with
// which ids, who may call it, and that every answered route has its handler.
#include "service/route_table.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>

#include "service/api_answer.h"
#include "service/assets.h"
#include "service/roles.h"
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

// Every entry's access, spelled out (docs/api.md, "Users and roles"): a new route
// fails here until its rule is written down.
TEST(RouteTableTest, EveryRouteHasItsRoles) {
  const std::map<Endpoint, Access> expected = {
      {Endpoint::kHealth, Access::kPublic},           {Endpoint::kMetrics, Access::kViewer},
      {Endpoint::kOpenApi, Access::kViewer},          {Endpoint::kMcp, Access::kBuilder},
      {Endpoint::kBuildChanges, Access::kViewer},     {Endpoint::kModels, Access::kViewer},
      {Endpoint::kHistory, Access::kViewer},          {Endpoint::kHistoryReport, Access::kViewer},
      {Endpoint::kModel, Access::kReadWrite},         {Endpoint::kModelFile, Access::kReadWrite},
      {Endpoint::kGroup, Access::kViewer},            {Endpoint::kGroupCancel, Access::kBuilder},
      {Endpoint::kGroupManifest, Access::kViewer},    {Endpoint::kGroupEngine, Access::kViewer},
      {Endpoint::kBuilds, Access::kReadWrite},        {Endpoint::kBuild, Access::kViewer},
      {Endpoint::kBuildCancel, Access::kBuilder},     {Endpoint::kBuildEvents, Access::kViewer},
      {Endpoint::kBuildTrace, Access::kViewer},       {Endpoint::kBuildEngine, Access::kViewer},
      {Endpoint::kBuildTimingCache, Access::kViewer}, {Endpoint::kBuildCompare, Access::kViewer},
      {Endpoint::kAudit, Access::kAdmin},             {Endpoint::kTimingCaches, Access::kViewer},
      {Endpoint::kTimingCache, Access::kReadWrite},
  };
  ASSERT_EQ(expected.size(), Routes().size());
  for (const RouteEntry& entry : Routes()) {
    ASSERT_TRUE(expected.count(entry.endpoint)) << entry.pattern;
    EXPECT_EQ(entry.access, expected.at(entry.endpoint)) << entry.pattern;
  }
}

TEST(RouteTableTest, ReadingNeedsAViewerChangingABuilder) {
  EXPECT_EQ(NeededRole(Access::kPublic, Method::kGet), std::nullopt);
  EXPECT_EQ(NeededRole(Access::kPublic, Method::kPost), std::nullopt);
  EXPECT_EQ(NeededRole(Access::kViewer, Method::kGet), Role::kViewer);
  EXPECT_EQ(NeededRole(Access::kReadWrite, Method::kGet), Role::kViewer);  // HEAD arrives as GET
  for (Method m : {Method::kPost, Method::kPut, Method::kDelete, Method::kOther}) {
    EXPECT_EQ(NeededRole(Access::kReadWrite, m), Role::kBuilder);
    EXPECT_EQ(NeededRole(Access::kBuilder, m), Role::kBuilder);
  }
  EXPECT_EQ(NeededRole(Access::kBuilder, Method::kGet), Role::kBuilder);
  EXPECT_EQ(NeededRole(Access::kAdmin, Method::kGet), Role::kAdmin);
  EXPECT_TRUE(RoleAllows(Role::kAdmin, Role::kBuilder));
  EXPECT_TRUE(RoleAllows(Role::kBuilder, Role::kViewer));
  EXPECT_FALSE(RoleAllows(Role::kViewer, Role::kBuilder));
  EXPECT_FALSE(RoleAllows(Role::kBuilder, Role::kAdmin));
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
