// ComputeCacheKey and CacheKeyFromText (include/trtwatch/engine_cache.h) over keys/.
#include "api/cache_key.h"

#include "keys/own_build_key.h"
#include "platform/cuda_driver.h"
#include "platform/sha256.h"

namespace trtwatch {

namespace {

CacheKey PublicKey(const keys::BuildKey& key) {
  CacheKey out;
  out.digest = key.digest;
  for (const keys::KeyPart& part : key.parts) out.parts.emplace_back(part.name, part.value);
  return out;
}

// The builder's GPU as CUDA numbers it; empty when found, else why not and the fix.
std::string FindGpu(int device, const std::string& cuda_library, keys::OwnBuild* build) {
  const CudaReport cuda = QueryCudaDevices(cuda_library);
  std::string problem = cuda.loaded ? CudaDeviceProblem(cuda, device) : cuda.error;
  if (problem.empty()) {
    const CudaDevice& gpu = cuda.devices[static_cast<size_t>(device)];
    build->gpu_name = gpu.name;
    build->gpu_compute_capability = std::to_string(gpu.cc_major) + "." + std::to_string(gpu.cc_minor);
    return "";
  }
  return "the build key needs the GPU the engine is for, and CUDA's device " + std::to_string(device) +
         " was not found (" + problem + "): give gpu_name and gpu_compute_capability, or check `trtwatch doctor`";
}

}  // namespace

namespace api {

CacheKeyResult ComputeCacheKey(const CacheKeySource& source, const std::string& cuda_library) {
  CacheKeyResult result;
  keys::OwnBuild build{source.models,           source.options,  source.extra, source.tensorrt_version,
                       source.gpu_name,         source.gpu_compute_capability};
  if (build.gpu_name.empty() != build.gpu_compute_capability.empty()) {
    result.error = "give both gpu_name and gpu_compute_capability, or neither (the GPU is then found through CUDA)";
    return result;
  }
  if (build.gpu_name.empty() && !build.tensorrt_version.empty()) {
    result.error = FindGpu(source.device, cuda_library, &build);
    if (!result.error.empty()) return result;
  }
  const keys::RecipeOutcome recipe = keys::OwnBuildKeyRecipe(build);
  if (!recipe.recipe) {
    result.error = recipe.error;
    return result;
  }
  const keys::KeyOutcome computed = keys::ComputeBuildKey(*recipe.recipe);
  if (!computed.key) {
    result.error = computed.error;
    return result;
  }
  result.key = PublicKey(*computed.key);
  return result;
}

CheckedKey CheckKey(const CacheKey& key) {
  keys::BuildKey checked;
  for (const auto& [name, value] : key.parts) checked.parts.push_back({name, value});
  checked.digest = HexOf(Sha256Of(keys::CanonicalDocument(checked.parts)));
  if (checked.digest != key.digest || key.digest.empty()) {
    return {std::nullopt, "the key's digest is not the digest of its parts: make keys with ComputeCacheKey or "
                          "CacheKeyFromText (Python: EngineCache.key), and keep them unchanged"};
  }
  return {std::move(checked), ""};
}

}  // namespace api

CacheKeyResult ComputeCacheKey(const CacheKeySource& source) {
  return api::ComputeCacheKey(source, kCudaDriverLibrary);
}

CacheKey CacheKeyFromText(std::string_view text) {
  // Parts without files and of distinct names: the key cannot fail.
  return PublicKey(*keys::ComputeBuildKey(keys::TextKeyRecipe(std::string(text))).key);
}

std::vector<char> PlanBytes(const void* data, size_t size) {
  if (data == nullptr) return {};
  const char* bytes = static_cast<const char*>(data);
  return std::vector<char>(bytes, bytes + size);
}

}  // namespace trtwatch
