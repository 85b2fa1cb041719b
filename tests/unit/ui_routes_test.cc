// The dashboard's URLs: the page for every URL it routes itself, each embedded file of
// src/service/dashboard/ under /ui/<name> with its content type, and nothing else.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "service/assets.h"
#include "service/ui_routes.h"

namespace trtwatch::service {
namespace {

bool IsEmbedded(std::string_view name) {
  for (const EmbeddedFile& file : DashboardFiles()) {
    if (file.name == name) return true;
  }
  return false;
}

TEST(UiAssetFor, ServesThePageForEveryDashboardUrl) {
  for (const char* path :
       {"/", "/index.html", "/ui/builds/b_0123456789abcdef0123456789abcdef", "/ui/builds/x", "/ui/audit"}) {
    const auto asset = UiAssetFor(path);
    ASSERT_TRUE(asset) << path;
    EXPECT_EQ(asset->content_type, "text/html; charset=utf-8");
    EXPECT_EQ(asset->body, DashboardPage());
    EXPECT_NE(asset->body.find(R"(<script type="module" src="/ui/main.js">)"), std::string_view::npos);
  }
}

TEST(UiAssetFor, ServesEveryDashboardFileUnderUiWithItsType) {
  EXPECT_TRUE(IsEmbedded("main.js"));
  EXPECT_TRUE(IsEmbedded("dashboard.css"));
  for (const EmbeddedFile& file : DashboardFiles()) {
    const auto asset = UiAssetFor("/ui/" + std::string(file.name));
    ASSERT_TRUE(asset) << file.name;
    EXPECT_EQ(asset->body, file.body) << file.name;
    EXPECT_FALSE(file.body.empty()) << file.name;
    const bool script = file.name.ends_with(".js");
    EXPECT_EQ(asset->content_type, script ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8") << file.name;
  }
}

// A module whose import names a file that is not embedded would fail in the browser only.
TEST(UiAssetFor, EveryModuleImportIsEmbedded) {
  constexpr std::string_view kFrom = "from \"./";
  int imports = 0;
  for (const EmbeddedFile& file : DashboardFiles()) {
    for (size_t at = file.body.find(kFrom); at != std::string_view::npos; at = file.body.find(kFrom, at + 1)) {
      const size_t start = at + kFrom.size();
      const std::string_view imported = file.body.substr(start, file.body.find('"', start) - start);
      EXPECT_TRUE(IsEmbedded(imported)) << file.name << " imports " << imported;
      ++imports;
    }
  }
  EXPECT_GT(imports, 0);
}

TEST(UiAssetFor, AnythingElseIsNotFound) {
  for (const char* path : {"/ui/builds/", "/ui", "/ui/", "/builds", "/ui/main.js.map", "/ui/dashboard.js",
                           "/ui/MAIN.JS", "/ui/dashboard/main.js", "/ui/../main.js", "/main.js", "/ui/session",
                           "/favicon.ico"}) {
    EXPECT_FALSE(UiAssetFor(path)) << path;
  }
}

TEST(UiContentTypeOf, KnowsScriptsAndStylesOnly) {
  EXPECT_EQ(UiContentTypeOf("main.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(UiContentTypeOf("dashboard.css"), "text/css; charset=utf-8");
  for (const char* name : {"main.js.map", "main.mjs", "logo.svg", "js", "README"}) {
    EXPECT_FALSE(UiContentTypeOf(name)) << name;
  }
}

}  // namespace
}  // namespace trtwatch::service
