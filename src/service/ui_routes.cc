#include "service/ui_routes.h"

#include "service/assets.h"

namespace trtwatch::service {

std::optional<UiAsset> UiAssetFor(std::string_view path) {
  constexpr std::string_view kBuildPages = "/ui/builds/";
  if (path == "/" || path == "/index.html" ||
      (path.size() > kBuildPages.size() && path.substr(0, kBuildPages.size()) == kBuildPages)) {
    return UiAsset{"text/html; charset=utf-8", DashboardPage()};
  }
  if (path == "/ui/dashboard.js") return UiAsset{"text/javascript; charset=utf-8", DashboardScript()};
  if (path == "/ui/dashboard.css") return UiAsset{"text/css; charset=utf-8", DashboardStyle()};
  return std::nullopt;
}

}  // namespace trtwatch::service
