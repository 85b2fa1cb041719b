#include "builds/artifacts/model_names.h"

#include <algorithm>

#include "builds/model_paths.h"
#include "platform/file_access.h"

namespace trtwatch::builds {

namespace {

bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

}  // namespace

std::string ArtifactNameError(std::string_view name, std::string_view what) {
  const bool chars_ok = std::all_of(name.begin(), name.end(), IsNameChar);
  if (!name.empty() && name.size() <= kMaxArtifactName && chars_ok && name.front() != '.') return {};
  return "the " + std::string(what) + " must be 1 to " + std::to_string(kMaxArtifactName) +
         " characters of A-Z a-z 0-9 . _ - and must not start with a dot (so not \".\" or \"..\"); rename it, "
         "e.g. resnet50-v2";
}

bool ResolveUploadedModel(std::string_view name, const std::string& models_dir, std::string* resolved,
                          std::string* error) {
  if (std::string why = ArtifactNameError(name, "model name"); !why.empty()) {
    *error = "\"models:" + std::string(name) + "\": " + why;
    return false;
  }
  if (models_dir.empty()) {
    *error = "\"models:NAME\" needs the service's artifact store; this server has none";
    return false;
  }
  const std::string path = models_dir + "/" + std::string(name) + "/" + std::string(kModelFileName);
  if (InspectPath(path).kind != PathKind::kFile) {
    *error = "no uploaded model \"" + std::string(name) + "\" with a " + std::string(kModelFileName) +
             "; upload it with PUT /models/" + std::string(name) + " (list them with GET /models)";
    return false;
  }
  return ResolveModelPath(path, {models_dir}, resolved, error);
}

}  // namespace trtwatch::builds
