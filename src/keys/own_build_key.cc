#include "keys/own_build_key.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "keys/onnx_external_data.h"

namespace trtwatch::keys {

namespace {

bool IsOnnx(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension == ".onnx";
}

// One model's parts under `name` ("model", or "model[i]" when there are several): its
// bytes, and an ONNX model's external-data files, as the TensorRT recipe names them.
std::string AddModel(const std::string& name, const std::string& path, KeyRecipe& recipe) {
  recipe.files.push_back({name + ".sha256", path});
  if (!IsOnnx(path)) return "";
  const ExternalDataOutcome external = FindExternalData(path);
  if (!external.locations) return external.error;
  recipe.parts.push_back({name + ".external_data", std::to_string(external.locations->size())});
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  for (const std::string& location : *external.locations) {
    recipe.files.push_back({name + ".external_data[" + location + "].sha256", (folder / location).string()});
  }
  return "";
}

}  // namespace

RecipeOutcome OwnBuildKeyRecipe(const OwnBuild& build) {
  RecipeOutcome outcome;
  if (build.tensorrt_version.empty()) {
    outcome.error =
        "the build key needs the version of the TensorRT library loaded: pass trtwatch::tensorrt::RuntimeVersion() "
        "(C++) or tensorrt.__version__ (Python)";
    return outcome;
  }
  if (build.gpu_name.empty() || build.gpu_compute_capability.empty()) {
    outcome.error = "the build key needs the GPU's name and compute capability: give both";
    return outcome;
  }
  KeyRecipe recipe;
  recipe.parts = {{"backend", kOwnBuildBackend},
                  {"tensorrt.runtime", build.tensorrt_version},
                  {"gpu.name", build.gpu_name},
                  {"gpu.compute_capability", build.gpu_compute_capability},
                  {"models", std::to_string(build.models.size())},
                  {"options", std::to_string(build.options.size())}};
  for (size_t i = 0; i < build.models.size(); ++i) {
    const std::string name = build.models.size() == 1 ? "model" : "model[" + std::to_string(i) + "]";
    if (std::string error = AddModel(name, build.models[i], recipe); !error.empty()) {
      outcome.error = std::move(error);
      return outcome;
    }
  }
  for (size_t i = 0; i < build.options.size(); ++i) {
    recipe.parts.push_back({"option[" + std::to_string(i) + "]", build.options[i]});
  }
  for (const auto& [name, value] : build.extra) recipe.parts.push_back({"extra." + name, value});
  outcome.recipe = std::move(recipe);
  return outcome;
}

KeyRecipe TextKeyRecipe(const std::string& text) {
  KeyRecipe recipe;
  recipe.parts = {{"backend", kOwnBuildBackend}, {"text", text}};
  return recipe;
}

}  // namespace trtwatch::keys
