// Files embedded in the binary at build time (CMake generates their definitions):
// docs/openapi.json and the dashboard (page, script, style). Threading: immutable data.
#pragma once

#include <string_view>

namespace trtwatch::service {

std::string_view OpenApiDocument();
std::string_view DashboardPage();
std::string_view DashboardScript();
std::string_view DashboardStyle();

}  // namespace trtwatch::service
