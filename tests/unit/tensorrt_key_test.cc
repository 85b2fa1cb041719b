// The build key of a TensorRT build (keys/tensorrt_key.h) on the TensorRT double: every
// part the engine depends on flips the key (a weight byte, an external-data byte, an
// option, a shape, a plugin byte, the run-time version, the GPU); what it does not
// depend on (paths, the timing cache, builder threads, how an option was spelt) does
// not.
#include "keys/tensorrt_key.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "backends/tensorrt/tensorrt_backend.h"
#include "fake_tensorrt.h"
#include "support/onnx_model.h"
#include "support/fake_tensorrt_library.h"
#include "support/temp_dir_test.h"

namespace trtwatch::keys {
namespace {

using trtwatch::testing::OnnxModel;
using trtwatch::testing::FakeTensorRt;
using trtwatch::testing::Tensor;

class TensorRtKeyTest : public trtwatch::testing::TempDirTest {
 protected:
  void SetUp() override {
    fake_trt::Reset();
    TempDirTest::SetUp();
    Write("model.onnx", OnnxModel({Tensor("w", "weights.bin"), Tensor("b", "")}));
    Write("weights.bin", std::string(1 << 16, 'w'));
    Write("plugin.so", "plugin bytes");
    options_.model = dir_ + "/model.onnx";
    options_.output = dir_ + "/model.engine";
    options_.dynamic_plugins = {dir_ + "/plugin.so"};
    options_.profiles = {{{"input", {1, 3, 224, 224}, {4, 3, 224, 224}, {8, 3, 224, 224}}}};
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    fake_trt::Reset();
  }
  void Write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << bytes;
  }

  // The key of a build of options_ as the backend describes it (TensorRT as loaded,
  // the GPU of --device through the fake NVML and CUDA driver).
  KeyOutcome Key() const {
    trt::TensorRtBackend backend(options_, FakeTensorRt(), {TRTWATCH_FAKE_NVML, TRTWATCH_FAKE_CUDA});
    const RecipeOutcome recipe = TensorRtKeyRecipe(options_, TargetFromFacts(backend.Describe().facts));
    if (!recipe.recipe) return {std::nullopt, recipe.error};
    return ComputeBuildKey(*recipe.recipe);
  }
  std::string Digest() const {
    const KeyOutcome key = Key();
    EXPECT_TRUE(key.key) << key.error;
    return key.key ? key.key->digest : "";
  }

  trt::BuildOptions options_;
};

TEST_F(TensorRtKeyTest, TheKeyNamesEveryPartItCovers) {
  const KeyOutcome key = Key();
  ASSERT_TRUE(key.key) << key.error;
  auto part = [&](const std::string& name) {
    const std::string* value = FindPart(*key.key, name);
    return value != nullptr ? *value : "<absent>";
  };
  EXPECT_EQ(part("backend"), "tensorrt");
  EXPECT_EQ(part("tensorrt.runtime"), trt::FormatTensorRtVersion(NV_TENSORRT_VERSION));
  EXPECT_EQ(part("gpu.name"), "Fake GPU H");
  EXPECT_EQ(part("gpu.compute_capability"), "9.0");
  EXPECT_EQ(part("model.external_data"), "1");
  EXPECT_EQ(part("model.external_data[weights.bin].sha256").size(), 64u);
  EXPECT_EQ(part("plugin.dynamic[0].sha256").size(), 64u);
  EXPECT_EQ(part("option.profile[0]"), "input:1x3x224x224/4x3x224x224/8x3x224x224");
  EXPECT_EQ(part("option.builder_optimization_level"), "3");  // the default, written out
  EXPECT_EQ(key.key->digest.size(), 64u);
  EXPECT_EQ(Digest(), key.key->digest);  // and it is stable
}

TEST_F(TensorRtKeyTest, EachPartFlipsTheKey) {
  const std::string base = Digest();
  struct Change {
    const char* what;
    std::function<void()> apply;
    std::function<void()> undo;
  };
  std::string model_bytes = OnnxModel({Tensor("w", "weights.bin"), Tensor("b", "")});
  std::string weights(1 << 16, 'w');
  const std::vector<Change> changes = {
      {"one byte of the model", [&] { Write("model.onnx", OnnxModel({Tensor("w", "weights.bin"), Tensor("b", "", "\x01\x03")})); },
       [&] { Write("model.onnx", model_bytes); }},
      {"one byte of the external data", [&] { weights[1000] = 'x'; Write("weights.bin", weights); },
       [&] { weights[1000] = 'w'; Write("weights.bin", weights); }},
      {"an option", [&] { options_.fp16 = true; }, [&] { options_.fp16 = false; }},
      {"a shape", [&] { options_.profiles[0][0].max[0] = 16; }, [&] { options_.profiles[0][0].max[0] = 8; }},
      {"one byte of a plugin", [&] { Write("plugin.so", "plugin byteZ"); }, [&] { Write("plugin.so", "plugin bytes"); }},
      {"the run-time version", [&] { fake_trt::GetScript().lib_version = NV_TENSORRT_VERSION + 1; },
       [&] { fake_trt::GetScript().lib_version = NV_TENSORRT_VERSION; }},
      {"the GPU", [&] { options_.device = 1; }, [&] { options_.device.reset(); }},
  };
  for (const Change& change : changes) {
    change.apply();
    EXPECT_NE(Digest(), base) << change.what << " did not change the key";
    change.undo();
    EXPECT_EQ(Digest(), base) << "undoing " << change.what << " did not give the key back";
  }
}

TEST_F(TensorRtKeyTest, WhatTheEngineDoesNotDependOnLeavesTheKey) {
  const std::string base = Digest();
  options_.output = dir_ + "/elsewhere.engine";
  options_.timing_cache = dir_ + "/timing.cache";
  options_.no_builder_cache = true;
  options_.max_threads = 4;
  options_.verbose = true;
  options_.optimization_level = 3;                                  // the default, said
  options_.tactic_sources = {{"CUDNN", false}, {"CUDNN", true}};    // no net change...
  EXPECT_NE(Digest(), base) << "an explicit tactic source is a change";
  options_.tactic_sources.clear();
  EXPECT_EQ(Digest(), base);
  options_.tactic_sources = {{"CUBLAS", false}, {"CUDNN", true}};
  const std::string one_order = Digest();
  options_.tactic_sources = {{"CUDNN", true}, {"CUBLAS", false}};
  EXPECT_EQ(Digest(), one_order) << "the order tactic sources were listed in changed the key";
  options_.tactic_sources.clear();
  // Inputs of a profile in another order.
  options_.profiles[0].push_back({"mask", {1, 1}, {4, 1}, {8, 1}});
  const std::string two_inputs = Digest();
  std::swap(options_.profiles[0][0], options_.profiles[0][1]);
  EXPECT_EQ(Digest(), two_inputs);
}

TEST_F(TensorRtKeyTest, HardwareCompatibleEnginesRelaxTheGpuAsTensorRtSays) {
  options_.hardware_compatibility_level = "ampere+";
  const std::string on_h = Digest();
  options_.device = 1;  // an Ampere GPU (8.0)
  EXPECT_EQ(Digest(), on_h) << "an ampere+ engine runs on every GPU from Ampere on";
  options_.hardware_compatibility_level = "sameComputeCapability";
  options_.device.reset();
  EXPECT_NE(Digest(), on_h);
  const std::string same_cc = Digest();
  options_.device = 1;
  EXPECT_NE(Digest(), same_cc) << "another compute capability is another engine";
}

TEST_F(TensorRtKeyTest, MissingExternalDataIsAnErrorNamingTheFile) {
  std::filesystem::remove(dir_ + "/weights.bin");
  const KeyOutcome key = Key();
  EXPECT_FALSE(key.key);
  EXPECT_NE(key.error.find("weights.bin"), std::string::npos) << key.error;
}

TEST_F(TensorRtKeyTest, AnUnknownGpuIsNoKey) {
  const RecipeOutcome recipe = TensorRtKeyRecipe(options_, {"10.3.0", "", ""});
  EXPECT_FALSE(recipe.recipe);
  EXPECT_NE(recipe.error.find("GPU"), std::string::npos) << recipe.error;
}

}  // namespace
}  // namespace trtwatch::keys
