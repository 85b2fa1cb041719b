#include "service/ui_routes.h"

#include "service/assets.h"

namespace trtwatch::service {
namespace {

// Every URL the page routes itself: the list, each build's page and the audit trail.
bool IsPagePath(std::string_view path) {
  constexpr std::string_view kBuildPages = "/ui/builds/";
  return path == "/" || path == "/index.html" || path == "/ui/audit" ||
         (path.size() > kBuildPages.size() && path.starts_with(kBuildPages));
}

}  // namespace

std::optional<std::string_view> UiContentTypeOf(std::string_view file_name) {
  // A JavaScript type is required: browsers refuse to run a module served as anything else.
  if (file_name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (file_name.ends_with(".css")) return "text/css; charset=utf-8";
  return std::nullopt;
}

std::optional<UiAsset> UiAssetFor(std::string_view path) {
  if (IsPagePath(path)) return UiAsset{"text/html; charset=utf-8", DashboardPage()};
  constexpr std::string_view kFiles = "/ui/";
  if (!path.starts_with(kFiles)) return std::nullopt;
  const std::string_view name = path.substr(kFiles.size());
  for (const EmbeddedFile& file : DashboardFiles()) {
    if (file.name != name) continue;
    const std::optional<std::string_view> type = UiContentTypeOf(name);
    if (!type) return std::nullopt;
    return UiAsset{*type, file.body};
  }
  return std::nullopt;
}

}  // namespace trtwatch::service
