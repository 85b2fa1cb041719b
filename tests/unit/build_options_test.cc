#include "backends/tensorrt/build_options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace trtwatch::trt {
namespace {

using ShapeList = std::vector<std::pair<std::string, Shape>>;

TEST(ShapeListTest, ParsesSeveralInputs) {
  ShapeList list;
  std::string error;
  ASSERT_TRUE(ParseShapeList("input:1x3x224x224,mask:8x128", "--optShapes", &list, &error)) << error;
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].first, "input");
  EXPECT_EQ(list[0].second, (Shape{1, 3, 224, 224}));
  EXPECT_EQ(list[1].first, "mask");
  EXPECT_EQ(list[1].second, (Shape{8, 128}));
}

TEST(ShapeListTest, QuotedNamesMayHoldColonsAndCommas) {
  ShapeList list;
  std::string error;
  ASSERT_TRUE(ParseShapeList("'input:0':1x3,'a,b':4", "--minShapes", &list, &error)) << error;
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].first, "input:0");
  EXPECT_EQ(list[1].first, "a,b");
  EXPECT_EQ(list[1].second, (Shape{4}));
  // Unquoted: the last colon separates the dims.
  ASSERT_TRUE(ParseShapeList("input:0:1x3", "--minShapes", &list, &error)) << error;
  EXPECT_EQ(list[0].first, "input:0");
}

TEST(ShapeListTest, EmptyTextIsNoShapes) {
  ShapeList list{{"x", {1}}};
  std::string error;
  EXPECT_TRUE(ParseShapeList("", "--minShapes", &list, &error));
  EXPECT_TRUE(list.empty());
}

TEST(ShapeListTest, BadSyntaxIsNamed) {
  ShapeList list;
  for (const char* bad : {"1x3x224x224", "input:1x-1", "input:1xx3", "input:", ":1x2", "input:1x2,", "input:1,input:2",
                          "'input:1x2", "in:1x2x3x4x5x6x7x8x9", "input:1x3.5"}) {
    std::string error;
    EXPECT_FALSE(ParseShapeList(bad, "--maxShapes", &list, &error)) << bad;
    EXPECT_EQ(error.rfind("--maxShapes", 0), 0u) << bad << ": " << error;
  }
}

BuildOptions Resolve(const RawBuildFlags& raw, std::string* error, bool* ok) {
  BuildOptions options;
  *ok = ResolveBuildOptions("model.onnx", "model.engine", raw, &options, error);
  return options;
}

TEST(ResolveTest, MapsEveryOption) {
  RawBuildFlags raw;
  raw.fp16 = raw.bf16 = raw.int8 = true;
  raw.mem_pool_size = {"workspace:2G"};
  raw.builder_optimization_level = "5";
  raw.max_aux_streams = "0";
  raw.max_threads = "8";
  raw.min_shapes = "input:1x3x224x224";
  raw.opt_shapes = "input:8x3x224x224,mask:8x128";
  raw.max_shapes = "input:32x3x224x224";
  raw.verbose = true;
  raw.timing_cache = "cache.bin";
  raw.timing_cache_ignore_mismatch = raw.no_builder_cache = raw.error_on_timing_cache_miss = true;
  std::string error;
  bool ok = false;
  const BuildOptions o = Resolve(raw, &error, &ok);
  ASSERT_TRUE(ok) << error;
  EXPECT_TRUE(o.fp16 && o.bf16 && o.int8 && !o.strongly_typed);
  EXPECT_EQ(o.workspace_bytes, 2ULL << 30);
  EXPECT_EQ(o.optimization_level, 5);
  EXPECT_EQ(o.max_aux_streams, 0);
  EXPECT_EQ(o.max_threads, 8);
  ASSERT_EQ(o.profiles.size(), 1u);
  const Profile& shapes = o.profiles[0];
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].input, "input");
  EXPECT_EQ(shapes[0].min, (Shape{1, 3, 224, 224}));
  EXPECT_EQ(shapes[0].opt, (Shape{8, 3, 224, 224}));
  EXPECT_EQ(shapes[0].max, (Shape{32, 3, 224, 224}));
  // Missing min and max default to opt, as in trtexec.
  EXPECT_EQ(shapes[1].input, "mask");
  EXPECT_EQ(shapes[1].min, (Shape{8, 128}));
  EXPECT_EQ(shapes[1].max, (Shape{8, 128}));
  EXPECT_TRUE(o.verbose && o.timing_cache_ignore_mismatch && o.no_builder_cache && o.error_on_timing_cache_miss);
  EXPECT_EQ(o.timing_cache, "cache.bin");
}

TEST(ResolveTest, DefaultsLeaveTensorRtDefaults) {
  std::string error;
  bool ok = false;
  const BuildOptions o = Resolve(RawBuildFlags{}, &error, &ok);
  ASSERT_TRUE(ok) << error;
  EXPECT_FALSE(o.workspace_bytes || o.optimization_level || o.max_aux_streams || o.max_threads);
  EXPECT_TRUE(o.profiles.empty());
  EXPECT_TRUE(o.notices.empty());
}

TEST(ResolveTest, MissingShapeListsAreFilledAsTrtexecDoes) {
  auto one = [](const char* min, const char* opt, const char* max) {
    RawBuildFlags raw;
    raw.min_shapes = min;
    raw.opt_shapes = opt;
    raw.max_shapes = max;
    std::string error;
    bool ok = false;
    const BuildOptions o = Resolve(raw, &error, &ok);
    EXPECT_TRUE(ok) << error;
    return o;
  };
  // min and max: opt is max (the done-when command line of issue 16).
  BuildOptions o = one("x:1x3", "", "x:8x3");
  EXPECT_EQ(o.profiles.at(0).at(0).opt, (Shape{8, 3}));
  EXPECT_NE(o.notices.at(0).find("--optShapes not given for \"x\": using --maxShapes (8x3)"), std::string::npos)
      << o.notices.at(0);
  o = one("x:2", "", "");  // min only: everything is min
  EXPECT_EQ(o.profiles[0][0].opt, (Shape{2}));
  EXPECT_EQ(o.profiles[0][0].max, (Shape{2}));
  o = one("", "", "x:4");  // max only: min and opt from max
  EXPECT_EQ(o.profiles[0][0].min, (Shape{4}));
  o = one("", "s:scalar", "");  // a 0-dimensional shape
  EXPECT_TRUE(o.profiles[0][0].opt.empty());
}

TEST(ResolveTest, SeveralProfilesAndPools) {
  RawBuildFlags raw;
  raw.profiles = {{"x:1", "x:2", "x:4"}, {"", "x:8", ""}};
  raw.mem_pool_size = {"workspace:1G,dlaSRAM:1M", "tacticSharedMem:48K", "dlaLocalDRAM:2", "dlaGlobalDRAM:3"};
  raw.ignored = {"--skipInference", "--iterations"};
  raw.tactic_sources = "-CUBLAS,+cudnn";
  std::string error;
  bool ok = false;
  const BuildOptions o = Resolve(raw, &error, &ok);
  ASSERT_TRUE(ok) << error;
  ASSERT_EQ(o.profiles.size(), 2u);
  EXPECT_EQ(o.profiles[1][0].min, (Shape{8}));
  EXPECT_EQ(o.dla_sram_bytes, 1ULL << 20);
  EXPECT_EQ(o.tactic_shared_memory_bytes, 48ULL << 10);
  EXPECT_EQ(o.dla_local_dram_bytes, 2ULL << 20);
  EXPECT_EQ(o.dla_global_dram_bytes, 3ULL << 20);
  ASSERT_EQ(o.tactic_sources.size(), 2u);
  EXPECT_FALSE(o.tactic_sources[0].enable);
  EXPECT_EQ(o.tactic_sources[1].source, "CUDNN");
  EXPECT_NE(std::find(o.notices.begin(), o.notices.end(),
                      "ignored (trtexec's inference options; trtwatch only builds the engine): --skipInference "
                      "--iterations"),
            o.notices.end());
}

struct BadCase {
  const char* what;
  RawBuildFlags raw;
  const char* message_part;
};

TEST(ResolveTest, RejectsContradictionsWithTheFix) {
  std::vector<BadCase> cases;
  auto add = [&](const char* what, auto edit, const char* part) {
    RawBuildFlags raw;
    edit(raw);
    cases.push_back({what, raw, part});
  };
  add("typed+fp16", [](RawBuildFlags& r) { r.strongly_typed = r.fp16 = true; }, "drop --fp16");
  add("two pools", [](RawBuildFlags& r) { r.mem_pool_size = {"workspace:1G", "workspace:2G"}; }, "twice");
  add("pool+workspace", [](RawBuildFlags& r) { r.mem_pool_size = {"workspace:1G"}; r.workspace = "10"; }, "not both");
  add("unknown pool", [](RawBuildFlags& r) { r.mem_pool_size = {"sram:1M"}; }, "POOL one of workspace, dlaSRAM");
  add("listed pool", [](RawBuildFlags& r) { r.mem_pool_size = {"workspace:1G,sram:1M"}; }, "sram:1M");
  add("tactic sign", [](RawBuildFlags& r) { r.tactic_sources = "CUBLAS"; }, "+SOURCE or -SOURCE");
  add("hw level", [](RawBuildFlags& r) { r.hardware_compatibility_level = "hopper+"; }, "not one of none, ampere+");
  add("lean alone", [](RawBuildFlags& r) { r.exclude_lean_runtime = true; }, "add --versionCompatible");
  add("fallback alone", [](RawBuildFlags& r) { r.allow_gpu_fallback = true; }, "needs --useDLACore");
  add("strict+ignore", [](RawBuildFlags& r) {
    r.timing_cache = "c";
    r.timing_cache_strict = r.timing_cache_ignore_mismatch = true;
  }, "contradict");
  add("shapes then profile", [](RawBuildFlags& r) { r.opt_shapes = "x:1"; r.profiles = {{"", "x:1", ""}}; },
      "before the first --profile");
  add("listed twice", [](RawBuildFlags& r) { r.mem_pool_size = {"workspace:1G,workspace:2G"}; }, "twice");
  add("level 6", [](RawBuildFlags& r) { r.builder_optimization_level = "6"; }, "from 0 to 5");
  add("level text", [](RawBuildFlags& r) { r.builder_optimization_level = "max"; }, "--builderOptimizationLevel");
  add("threads 0", [](RawBuildFlags& r) { r.max_threads = "0"; }, "--maxThreads");
  add("aux -1", [](RawBuildFlags& r) { r.max_aux_streams = "-1"; }, "--maxAuxStreams");
  add("ranks", [](RawBuildFlags& r) { r.opt_shapes = "x:1x2"; r.max_shapes = "x:1"; }, "same number of dimensions");
  add("order", [](RawBuildFlags& r) { r.min_shapes = "x:4x2"; r.opt_shapes = "x:2x2"; }, "min <= opt <= max");
  add("bad syntax", [](RawBuildFlags& r) { r.opt_shapes = "x=1x2"; }, "--optShapes");
  add("ignore w/o cache", [](RawBuildFlags& r) { r.timing_cache_ignore_mismatch = true; }, "needs --timing-cache");
  add("miss w/o cache", [](RawBuildFlags& r) { r.error_on_timing_cache_miss = true; }, "needs --timing-cache");
  add("cache is engine", [](RawBuildFlags& r) { r.timing_cache = "model.engine"; }, "its own file");
  for (const BadCase& c : cases) {
    std::string error;
    bool ok = true;
    Resolve(c.raw, &error, &ok);
    EXPECT_FALSE(ok) << c.what;
    EXPECT_NE(error.find(c.message_part), std::string::npos) << c.what << ": " << error;
  }
}

TEST(ResolveTest, NeedsModelAndEngine) {
  BuildOptions o;
  std::string error;
  // No engine file: built and not saved, as trtexec without --saveEngine, with a notice.
  EXPECT_TRUE(ResolveBuildOptions("m.onnx", "", RawBuildFlags{}, &o, &error)) << error;
  EXPECT_NE(o.notices.at(0).find("not saved"), std::string::npos);
  EXPECT_FALSE(ResolveBuildOptions("m.onnx", "m.onnx", RawBuildFlags{}, &o, &error));
  EXPECT_NE(error.find("overwrite the model"), std::string::npos) << error;
}

class BuildPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/trtwatch-paths-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    std::ofstream(dir_ + "/model.onnx") << "onnx";
  }
  void TearDown() override {
    ::unlink((dir_ + "/model.onnx").c_str());
    ::rmdir(dir_.c_str());
  }
  bool Check(const std::string& model, const std::string& output, const std::string& cache, std::string* error) {
    BuildOptions o;
    o.model = model;
    o.output = output;
    o.timing_cache = cache;
    return CheckBuildPaths(o, error);
  }
  std::string dir_;
};

TEST_F(BuildPathsTest, AcceptsAReadableModelAndAnExistingFolder) {
  std::string error;
  EXPECT_TRUE(Check(dir_ + "/model.onnx", dir_ + "/model.engine", dir_ + "/t.cache", &error)) << error;
}

TEST_F(BuildPathsTest, NamesEachProblem) {
  std::string error;
  EXPECT_FALSE(Check(dir_ + "/missing.onnx", dir_ + "/m.engine", "", &error));
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
  EXPECT_NE(error.find("missing.onnx"), std::string::npos) << error;

  EXPECT_FALSE(Check(dir_, dir_ + "/m.engine", "", &error));
  EXPECT_NE(error.find("is a folder"), std::string::npos) << error;

  EXPECT_FALSE(Check(dir_ + "/model.onnx", dir_ + "/out/m.engine", "", &error));
  EXPECT_NE(error.find("mkdir -p " + dir_ + "/out"), std::string::npos) << error;

  EXPECT_FALSE(Check(dir_ + "/model.onnx", dir_, "", &error));
  EXPECT_NE(error.find("give the engine's file name"), std::string::npos) << error;

  EXPECT_FALSE(Check(dir_ + "/model.onnx", dir_ + "/m.engine", dir_ + "/nope/t.cache", &error));
  EXPECT_NE(error.find("--timing-cache"), std::string::npos) << error;
}

TEST(TensorRtMajorTest, VersionLimits) {
  BuildOptions o;
  std::string error;
  EXPECT_TRUE(CheckForTensorRtMajor(o, 9, &error));
  EXPECT_FALSE(CheckForTensorRtMajor(o, 8, &error));
  EXPECT_NE(error.find("TensorRT 9.0"), std::string::npos) << error;
  o.fp16 = true;
  EXPECT_TRUE(CheckForTensorRtMajor(o, 10, &error));
  EXPECT_FALSE(CheckForTensorRtMajor(o, 11, &error));
  EXPECT_NE(error.find("strongly typed"), std::string::npos) << error;
  o.fp16 = false;
  o.strongly_typed = true;
  EXPECT_TRUE(CheckForTensorRtMajor(o, 11, &error));
  o.max_tactics = 2;  // setMaxNbTactics came in 10.4
  EXPECT_FALSE(CheckForTensorRtVersion(o, 10, 3, &error));
  EXPECT_NE(error.find("--maxTactics needs TensorRT 10.4 or newer"), std::string::npos) << error;
  EXPECT_TRUE(CheckForTensorRtVersion(o, 10, 4, &error));
}

TEST(TensorRtVersionTest, DecodesBothEncodings) {
  EXPECT_EQ(FormatTensorRtVersion(100300), "10.3.0");
  EXPECT_EQ(FormatTensorRtVersion(101600), "10.16.0");
  EXPECT_EQ(FormatTensorRtVersion(110100), "11.1.0");
  EXPECT_EQ(FormatTensorRtVersion(9200), "9.2.0");
  EXPECT_EQ(FormatTensorRtVersion(8601), "8.6.1");
  EXPECT_EQ(FormatTensorRtVersion(0), "unknown");
  EXPECT_EQ(FormatShape({1, 3, 224}), "1x3x224");
}

}  // namespace
}  // namespace trtwatch::trt
