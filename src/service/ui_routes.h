// The dashboard's URLs: which path serves which embedded file. Pages are public (they
// hold no data; the API calls they make are what --token-file protects), so a browser
// can load the sign-in form. Every page answer carries kUiSecurityHeaders' policy:
// scripts and styles from this origin only, no framing, no referrer.
//
// Threading: pure functions over immutable data.
#pragma once

#include <optional>
#include <string_view>

namespace trtwatch::service {

struct UiAsset {
  std::string_view content_type;
  std::string_view body;
};

// "/", "/index.html" and "/ui/builds/<anything>" give the page (the page routes
// itself); "/ui/<name>" the file of that name in src/service/dashboard/ (its modules
// and its style). Anything else: nullopt (404).
std::optional<UiAsset> UiAssetFor(std::string_view path);

// The Content-Type a dashboard file is served with, from its extension; nullopt for a
// kind of file the dashboard does not serve.
std::optional<std::string_view> UiContentTypeOf(std::string_view file_name);

// Content-Security-Policy for every dashboard answer.
inline constexpr std::string_view kUiContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

}  // namespace trtwatch::service
