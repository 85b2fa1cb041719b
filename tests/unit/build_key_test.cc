// The build key's mechanics (keys/build_key.h), the ONNX external-data scan
// (keys/onnx_external_data.h) and the simulated build's recipe. The TensorRT recipe,
// on the TensorRT double, is tensorrt_key_test.cc.
#include "keys/build_key.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "backends/simulated/profile.h"
#include "keys/onnx_external_data.h"
#include "keys/simulated_key.h"
#include "platform/sha256.h"
#include "support/onnx_model.h"
#include "support/temp_dir_test.h"

namespace trtwatch::keys {
namespace {

namespace fs = std::filesystem;
using trtwatch::testing::Field;
using trtwatch::testing::OnnxModel;
using trtwatch::testing::Tensor;

class BuildKeyTest : public trtwatch::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    folder_ = dir_;
  }
  void TearDown() override { fs::remove_all(folder_); }

  std::string Write(const std::string& name, const std::string& bytes) const {
    const fs::path path = folder_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }

  fs::path folder_;
};

std::string DigestOf(const KeyRecipe& recipe) {
  const KeyOutcome outcome = ComputeBuildKey(recipe);
  EXPECT_TRUE(outcome.key) << outcome.error;
  return outcome.key ? outcome.key->digest : "";
}

TEST_F(BuildKeyTest, PartsAreSortedAndTheDigestIsTheDocumentsSha256) {
  const std::string model = Write("m.onnx", "weights");
  const KeyOutcome outcome = ComputeBuildKey({{{"option.fp16", "true"}, {"backend", "tensorrt"}}, {{"model.sha256", model}}});
  ASSERT_TRUE(outcome.key) << outcome.error;
  const std::vector<KeyPart>& parts = outcome.key->parts;
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].name, "backend");
  EXPECT_EQ(parts[1].name, "model.sha256");
  EXPECT_EQ(parts[1].value, HexOf(Sha256Of("weights")));
  EXPECT_EQ(parts[2].name, "option.fp16");
  EXPECT_EQ(outcome.key->digest, HexOf(Sha256Of(CanonicalDocument(parts))));
  EXPECT_EQ(CanonicalDocument(parts), std::string(kKeyFormat) + "\nbackend=tensorrt\nmodel.sha256=" +
                                          HexOf(Sha256Of("weights")) + "\noption.fp16=true\n");
  // The order a recipe lists its parts in is not part of the key.
  EXPECT_EQ(DigestOf({{{"backend", "tensorrt"}, {"option.fp16", "true"}}, {{"model.sha256", model}}}),
            outcome.key->digest);
}

TEST_F(BuildKeyTest, SeparatorsInNamesAndValuesCannotForgeAnotherDocument) {
  // Without escaping, both would be "a=b=c\n".
  EXPECT_NE(CanonicalDocument({{"a", "b=c"}}), CanonicalDocument({{"a=b", "c"}}));
  EXPECT_NE(CanonicalDocument({{"a", "x\nb=y"}}), CanonicalDocument({{"a", "x"}, {"b", "y"}}));
  EXPECT_EQ(CanonicalDocument({{"a", "1\\=2\n"}}), std::string(kKeyFormat) + "\na=1\\\\\\=2\\n\n");
}

TEST_F(BuildKeyTest, OneByteOfAFileFlipsTheKey) {
  const std::string model = Write("m.onnx", std::string(4096, 'w'));
  const std::string before = DigestOf({{{"backend", "tensorrt"}}, {{"model.sha256", model}}});
  std::string changed(4096, 'w');
  changed[2048] = 'x';
  Write("m.onnx", changed);
  EXPECT_NE(DigestOf({{{"backend", "tensorrt"}}, {{"model.sha256", model}}}), before);
}

TEST_F(BuildKeyTest, AnUnreadableFileOrARepeatedNameIsAnErrorNamingIt) {
  KeyOutcome missing = ComputeBuildKey({{}, {{"plugin.dynamic[0].sha256", (folder_ / "absent.so").string()}}});
  EXPECT_FALSE(missing.key);
  EXPECT_NE(missing.error.find("plugin.dynamic[0].sha256"), std::string::npos) << missing.error;
  EXPECT_NE(missing.error.find("absent.so"), std::string::npos) << missing.error;
  KeyOutcome twice = ComputeBuildKey({{{"backend", "a"}, {"backend", "b"}}, {}});
  EXPECT_FALSE(twice.key);
  EXPECT_NE(twice.error.find("\"backend\""), std::string::npos) << twice.error;
}

TEST_F(BuildKeyTest, FindsExternalDataInInitializersAndNodeAttributes) {
  // A Constant node whose value tensor is stored externally (AttributeProto.t).
  const std::string constant = Field(1, Field(5, Field(1, "value") + Field(5, Tensor("c", "const.bin"))));
  std::string model = OnnxModel({Tensor("w1", "weights.bin"), Tensor("w2", "weights.bin"), Tensor("b", ""),
                                 Tensor("w3", "sub/more.bin")});
  model += Field(7, constant);  // a second graph field merges into the first, as protobuf does
  const ExternalDataOutcome found = FindExternalData(Write("m.onnx", model));
  ASSERT_TRUE(found.locations) << found.error;
  EXPECT_EQ(*found.locations, (std::vector<std::string>{"const.bin", "sub/more.bin", "weights.bin"}));
}

TEST_F(BuildKeyTest, AModelWithItsWeightsInsideHasNoExternalData) {
  const ExternalDataOutcome found = FindExternalData(Write("m.onnx", OnnxModel({Tensor("w", "")})));
  ASSERT_TRUE(found.locations) << found.error;
  EXPECT_TRUE(found.locations->empty());
}

TEST_F(BuildKeyTest, LocationsOutsideTheModelsFolderAreRefused) {
  for (const std::string location : {"../secret.bin", "a/../../b.bin", "/etc/passwd", "C:\\w.bin", "w\n.bin"}) {
    const ExternalDataOutcome found = FindExternalData(Write("m.onnx", OnnxModel({Tensor("w", location)})));
    EXPECT_FALSE(found.locations) << location;
    EXPECT_NE(found.error.find("relative to it"), std::string::npos) << found.error;
    EXPECT_EQ(found.error.find('\n'), std::string::npos) << "a control character reached the message";
  }
}

TEST_F(BuildKeyTest, ADamagedOrForeignFileIsAnErrorNamingTheModel) {
  const std::string model = OnnxModel({Tensor("w", "weights.bin")});
  for (const std::string& bytes : {model.substr(0, model.size() - 3), std::string("\x0b\x0c garbage", 10),
                                  std::string("\x3a\xff\xff\xff\xff\x0f", 6)}) {
    const ExternalDataOutcome found = FindExternalData(Write("m.onnx", bytes));
    EXPECT_FALSE(found.locations);
    EXPECT_NE(found.error.find("is not a readable ONNX model"), std::string::npos) << found.error;
    EXPECT_NE(found.error.find("m.onnx"), std::string::npos) << found.error;
  }
  EXPECT_FALSE(FindExternalData((folder_ / "absent.onnx").string()).locations);
}

TEST_F(BuildKeyTest, SimulatedKeysFollowTheProfileAndTheSpeedButNotTheSeed) {
  std::string error;
  const std::optional<sim::Profile> small = sim::LoadProfile("small-cnn", &error);
  const std::optional<sim::Profile> large = sim::LoadProfile("large-transformer", &error);
  ASSERT_TRUE(small && large) << error;
  const std::string base = DigestOf(SimulatedKeyRecipe(*small, {1, 1.0}));
  EXPECT_EQ(DigestOf(SimulatedKeyRecipe(*small, {7, 1.0})), base);
  EXPECT_NE(DigestOf(SimulatedKeyRecipe(*small, {1, 2.0})), base);
  EXPECT_NE(DigestOf(SimulatedKeyRecipe(*large, {1, 1.0})), base);
  const KeyOutcome key = ComputeBuildKey(SimulatedKeyRecipe(*small, {1, 2.0}));
  ASSERT_TRUE(key.key);
  ASSERT_NE(FindPart(*key.key, "simulate.speed"), nullptr);
  EXPECT_EQ(*FindPart(*key.key, "simulate.speed"), "2");
  EXPECT_EQ(*FindPart(*key.key, "simulate.profile.sha256"), HexOf(Sha256Of(small->source)));
}

}  // namespace
}  // namespace trtwatch::keys
