#include "keys/tensorrt_key.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "keys/onnx_external_data.h"

namespace trtwatch::keys {

namespace {

std::string Flag(bool on) { return on ? "true" : "false"; }

template <class T>
std::string OrDefault(const std::optional<T>& value, const std::string& fallback) {
  return value ? std::to_string(*value) : fallback;
}

std::string OrDefault(const std::string& value, const std::string& fallback) { return value.empty() ? fallback : value; }

// Inputs in name order (their order on the command line does not change the engine);
// each "NAME:MIN/OPT/MAX".
std::string ProfileText(const trt::Profile& profile) {
  std::vector<std::string> ranges;
  for (const trt::ShapeRange& range : profile) {
    ranges.push_back(range.input + ":" + trt::FormatShape(range.min) + "/" + trt::FormatShape(range.opt) + "/" +
                     trt::FormatShape(range.max));
  }
  std::sort(ranges.begin(), ranges.end());
  std::string text;
  for (const std::string& r : ranges) text += (text.empty() ? "" : ",") + r;
  return text;
}

// The net change to TensorRT's default set: per source the last word wins, sorted.
std::string TacticSourcesText(const std::vector<trt::TacticSourceChange>& changes) {
  std::map<std::string, bool> net;
  for (const trt::TacticSourceChange& change : changes) net[change.source] = change.enable;
  std::string text;
  for (const auto& [source, enable] : net) text += (text.empty() ? "" : ",") + std::string(enable ? "+" : "-") + source;
  return text.empty() ? "default" : text;
}

std::vector<KeyPart> OptionParts(const trt::BuildOptions& o) {
  // Defaults as TensorRT documents them, so that saying the default is no change.
  std::vector<KeyPart> parts = {
      {"option.fp16", Flag(o.fp16)},
      {"option.bf16", Flag(o.bf16)},
      {"option.int8", Flag(o.int8)},
      {"option.fp8", Flag(o.fp8)},
      {"option.int4", Flag(o.int4)},
      {"option.best", Flag(o.best)},
      {"option.strongly_typed", Flag(o.strongly_typed)},
      {"option.tf32", Flag(!o.no_tf32)},
      {"option.workspace_bytes", OrDefault(o.workspace_bytes, "device memory")},
      {"option.dla_sram_bytes", OrDefault(o.dla_sram_bytes, "default")},
      {"option.dla_local_dram_bytes", OrDefault(o.dla_local_dram_bytes, "default")},
      {"option.dla_global_dram_bytes", OrDefault(o.dla_global_dram_bytes, "default")},
      {"option.tactic_shared_memory_bytes", OrDefault(o.tactic_shared_memory_bytes, "default")},
      {"option.builder_optimization_level", OrDefault(o.optimization_level, "3")},
      {"option.max_aux_streams", OrDefault(o.max_aux_streams, "heuristic")},
      {"option.max_tactics", OrDefault(o.max_tactics, "-1")},
      {"option.tiling_optimization_level", OrDefault(o.tiling_optimization_level, "0")},
      {"option.tactic_sources", TacticSourcesText(o.tactic_sources)},
      {"option.hardware_compatibility_level", OrDefault(o.hardware_compatibility_level, "none")},
      {"option.profiling_verbosity", OrDefault(o.profiling_verbosity, "layer_names_only")},
      {"option.version_compatible", Flag(o.version_compatible)},
      {"option.exclude_lean_runtime", Flag(o.exclude_lean_runtime)},
      {"option.refit", Flag(o.refit)},
      {"option.strip_weights", Flag(o.strip_weights)},
      {"option.allow_weight_streaming", Flag(o.allow_weight_streaming)},
      {"option.direct_io", Flag(o.direct_io)},
      {"option.sparsity", Flag(o.sparsity)},
      {"option.dla_core", OrDefault(o.dla_core, "none")},
      {"option.allow_gpu_fallback", Flag(o.allow_gpu_fallback)},
      {"option.profiles", std::to_string(o.profiles.size())},
  };
  for (size_t i = 0; i < o.profiles.size(); ++i) {
    parts.push_back({"option.profile[" + std::to_string(i) + "]", ProfileText(o.profiles[i])});
  }
  return parts;
}

// Plugin libraries by their bytes, in the order given (the order they load in).
void AddPlugins(const char* kind, const std::vector<std::string>& paths, KeyRecipe& recipe) {
  recipe.parts.push_back({std::string("plugin.") + kind, std::to_string(paths.size())});
  for (size_t i = 0; i < paths.size(); ++i) {
    recipe.files.push_back({std::string("plugin.") + kind + "[" + std::to_string(i) + "].sha256", paths[i]});
  }
}

// TensorRT's hardware compatibility: ampere+ engines run on any GPU from Ampere on,
// sameComputeCapability ones on any GPU of the builder's compute capability.
void AddGpu(const std::string& level, const TensorRtTarget& target, KeyRecipe& recipe) {
  if (level == "ampere+") {
    recipe.parts.push_back({"gpu.name", "any (hardware compatibility ampere+)"});
    recipe.parts.push_back({"gpu.compute_capability", "ampere+"});
  } else if (level == "sameComputeCapability") {
    recipe.parts.push_back({"gpu.name", "any (hardware compatibility sameComputeCapability)"});
    recipe.parts.push_back({"gpu.compute_capability", target.gpu_compute_capability});
  } else {
    recipe.parts.push_back({"gpu.name", target.gpu_name});
    recipe.parts.push_back({"gpu.compute_capability", target.gpu_compute_capability});
  }
}

}  // namespace

TensorRtTarget TargetFromFacts(const Facts& facts) {
  auto fact = [&](const char* name) {
    const auto found = std::find_if(facts.begin(), facts.end(), [&](const auto& f) { return f.first == name; });
    return found == facts.end() ? std::string() : found->second;
  };
  return {fact("tensorrt_version"), fact("gpu"), fact("gpu_compute_capability")};
}

RecipeOutcome TensorRtKeyRecipe(const trt::BuildOptions& options, const TensorRtTarget& target) {
  RecipeOutcome outcome;
  if (target.runtime_version.empty() || target.runtime_version == "unknown") {
    outcome.error = "the build key needs the version of the TensorRT library loaded, which is not known";
    return outcome;
  }
  if (target.gpu_name.empty() || target.gpu_compute_capability.empty()) {
    outcome.error =
        "the build key needs the GPU's name and compute capability, which neither the CUDA driver nor NVML "
        "reported: check `trtwatch doctor`";
    return outcome;
  }
  const ExternalDataOutcome external = FindExternalData(options.model);
  if (!external.locations) {
    outcome.error = external.error;
    return outcome;
  }
  KeyRecipe recipe;
  recipe.parts = {{"backend", "tensorrt"}, {"tensorrt.runtime", target.runtime_version}};
  recipe.files.push_back({"model.sha256", options.model});
  recipe.parts.push_back({"model.external_data", std::to_string(external.locations->size())});
  const std::filesystem::path folder = std::filesystem::path(options.model).parent_path();
  for (const std::string& location : *external.locations) {
    recipe.files.push_back({"model.external_data[" + location + "].sha256", (folder / location).string()});
  }
  for (KeyPart& part : OptionParts(options)) recipe.parts.push_back(std::move(part));
  AddPlugins("static", options.static_plugins, recipe);
  AddPlugins("dynamic", options.dynamic_plugins, recipe);
  AddPlugins("serialized", options.plugins_to_serialize, recipe);
  AddGpu(options.hardware_compatibility_level, target, recipe);
  outcome.recipe = std::move(recipe);
  return outcome;
}

}  // namespace trtwatch::keys
