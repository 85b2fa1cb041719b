// Files embedded in the binary at build time (CMake generates their definitions):
// docs/openapi.json, the dashboard's page, and every script and style beside it in
// src/service/dashboard/. Threading: immutable data.
#pragma once

#include <span>
#include <string_view>

namespace trtwatch::service {

struct EmbeddedFile {
  std::string_view name;  // the file name, e.g. "main.js"
  std::string_view body;
};

std::string_view OpenApiDocument();
std::string_view DashboardPage();
// The files of src/service/dashboard/, sorted by name.
std::span<const EmbeddedFile> DashboardFiles();

}  // namespace trtwatch::service
