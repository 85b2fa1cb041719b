// Path confinement, request checks, routing and token comparison.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "builds/build_request.h"
#include "support/parse_build_request.h"
#include "protocol/json_body.h"
#include "service/http_request.h"
#include "service/route_table.h"
#include "builds/model_paths.h"
#include "builds/stores/sqlite_store.h"
#include "service/server.h"

namespace trtwatch::service {
namespace {

namespace fs = std::filesystem;
using namespace trtwatch::builds;  // the request rules live in the builds layer

class ModelPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/trtwatch_paths_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = fs::path(tmpl);
    fs::create_directories(base_ / "root" / "sub");
    fs::create_directories(base_ / "outside");
    std::ofstream(base_ / "root" / "sub" / "net.onnx") << "x";
    std::ofstream(base_ / "outside" / "secret.onnx") << "x";
    fs::create_symlink(base_ / "outside" / "secret.onnx", base_ / "root" / "link.onnx");
    fs::create_symlink(base_ / "root" / "sub" / "net.onnx", base_ / "root" / "inner.onnx");
    std::string error;
    ASSERT_TRUE(CanonicalRoots({(base_ / "root").string()}, &roots_, &error)) << error;
  }
  void TearDown() override { fs::remove_all(base_); }
  bool Resolve(const std::string& p, std::string* error) {
    std::string resolved;
    return ResolveModelPath(p, roots_, &resolved, error);
  }
  fs::path base_;
  std::vector<std::string> roots_;
};

TEST_F(ModelPathTest, AcceptsPathsInsideARoot) {
  std::string resolved, error;
  ASSERT_TRUE(ResolveModelPath("sub/net.onnx", roots_, &resolved, &error)) << error;
  EXPECT_EQ(resolved, fs::canonical(base_ / "root" / "sub" / "net.onnx").string());
  ASSERT_TRUE(ResolveModelPath((base_ / "root" / "sub" / "net.onnx").string(), roots_, &resolved, &error));
  ASSERT_TRUE(ResolveModelPath("inner.onnx", roots_, &resolved, &error)) << "a symlink staying inside is fine";
}

TEST_F(ModelPathTest, RefusesEscapes) {
  std::string error;
  EXPECT_FALSE(Resolve("../outside/secret.onnx", &error));
  EXPECT_NE(error.find(".."), std::string::npos);
  EXPECT_FALSE(Resolve("sub/../../outside/secret.onnx", &error));
  EXPECT_FALSE(Resolve((base_ / "outside" / "secret.onnx").string(), &error));
  EXPECT_NE(error.find("outside every model root"), std::string::npos);
  EXPECT_FALSE(Resolve("link.onnx", &error));
  EXPECT_NE(error.find("outside every model root"), std::string::npos);
  EXPECT_FALSE(Resolve("sub", &error));
  EXPECT_NE(error.find("regular file"), std::string::npos);
  EXPECT_FALSE(Resolve("missing.onnx", &error));
  EXPECT_FALSE(Resolve("", &error));
  EXPECT_FALSE(Resolve(std::string("a\0b", 3), &error));
}

TEST_F(ModelPathTest, ARootPrefixIsNotARoot) {
  fs::create_directories(base_ / "root2");
  std::ofstream(base_ / "root2" / "m.onnx") << "x";
  std::string error;
  EXPECT_FALSE(Resolve((base_ / "root2" / "m.onnx").string(), &error));
}

TEST_F(ModelPathTest, RootsAreCanonicalAndMustBeExistingFolders) {
  fs::create_symlink(base_ / "root", base_ / "rootlink");
  std::vector<std::string> roots;
  std::string error;
  ASSERT_TRUE(CanonicalRoots({(base_ / "rootlink").string(), (base_ / "root" / "sub" / "..").string() + "/"}, &roots,
                             &error))
      << error;
  const std::string real_root = fs::canonical(base_ / "root").string();
  EXPECT_EQ(roots, (std::vector<std::string>{real_root, real_root}));

  // A relative root is made absolute against the working folder.
  const fs::path cwd = fs::current_path();
  fs::current_path(base_);
  const bool relative_ok = CanonicalRoots({"root/sub"}, &roots, &error);
  fs::current_path(cwd);
  ASSERT_TRUE(relative_ok) << error;
  EXPECT_EQ(roots, std::vector<std::string>{real_root + "/sub"});

  for (const std::string& bad : {(base_ / "missing").string(), (base_ / "root" / "sub" / "net.onnx").string(),
                                 (base_ / "root" / "sub" / "net.onnx" / "").string(), std::string()}) {
    error.clear();
    EXPECT_FALSE(CanonicalRoots({(base_ / "root").string(), bad}, &roots, &error)) << bad;
    EXPECT_EQ(error, "--model-root \"" + bad + "\" is not an existing folder; create it or fix the path");
  }
  fs::create_symlink(base_ / "gone", base_ / "dangling");
  EXPECT_FALSE(CanonicalRoots({(base_ / "dangling").string()}, &roots, &error));
}

TEST_F(ModelPathTest, ModelsAreResolvedThroughSymlinkedFolders) {
  fs::create_symlink(base_ / "root" / "sub", base_ / "root" / "sublink");
  std::string resolved, error;
  ASSERT_TRUE(ResolveModelPath("sublink/./net.onnx", roots_, &resolved, &error)) << error;
  EXPECT_EQ(resolved, fs::canonical(base_ / "root" / "sub" / "net.onnx").string());
  EXPECT_FALSE(ResolveModelPath("sub/net.onnx/", roots_, &resolved, &error)) << "a file is no folder";
  EXPECT_NE(error.find("not found"), std::string::npos) << error;
}

class WritablePathTest : public ModelPathTest {
 protected:
  bool Writable(const std::string& p, std::string* resolved, std::string* error,
                const std::string& default_dir = "") {
    return ResolveWritablePath(p, roots_, default_dir, resolved, error);
  }
};

TEST_F(WritablePathTest, NewAndExistingFilesInsideARootAreAccepted) {
  const std::string root = roots_.front();
  std::string resolved, error;
  ASSERT_TRUE(Writable(root + "/sub/cache.bin", &resolved, &error)) << error;
  EXPECT_EQ(resolved, root + "/sub/cache.bin");
  ASSERT_TRUE(Writable(root + "/sub/net.onnx", &resolved, &error)) << error;
  EXPECT_EQ(resolved, root + "/sub/net.onnx");
  ASSERT_TRUE(Writable("cache.bin", &resolved, &error, root + "/sub")) << error;
  EXPECT_EQ(resolved, root + "/sub/cache.bin");
  ASSERT_TRUE(Writable("inner.onnx", &resolved, &error, root)) << "a symlink staying inside: " << error;
  EXPECT_EQ(resolved, root + "/inner.onnx");
}

TEST_F(WritablePathTest, EscapesFoldersAndMissingFoldersAreRefused) {
  const std::string root = roots_.front();
  std::string resolved, error;
  EXPECT_FALSE(Writable(root + "/link.onnx", &resolved, &error));
  EXPECT_NE(error.find("resolves outside every model root"), std::string::npos) << error;
  fs::create_symlink(base_ / "outside" / "not-yet", base_ / "root" / "dangling.bin");
  EXPECT_FALSE(Writable(root + "/dangling.bin", &resolved, &error)) << "a dangling symlink is not a new file";
  EXPECT_NE(error.find("resolves outside every model root"), std::string::npos) << error;
  EXPECT_FALSE(Writable(root + "/sub", &resolved, &error));
  EXPECT_NE(error.find("exists and is not a regular file"), std::string::npos) << error;
  EXPECT_FALSE(Writable(root + "/nowhere/cache.bin", &resolved, &error));
  EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
  EXPECT_FALSE(Writable((base_ / "outside" / "cache.bin").string(), &resolved, &error));
  EXPECT_NE(error.find("outside every model root"), std::string::npos) << error;
  EXPECT_FALSE(Writable("cache.bin", &resolved, &error));
  EXPECT_NE(error.find("absolute path"), std::string::npos) << error;
}

TEST(ModelPathNoRootTest, RealBuildsNeedARoot) {
  std::string resolved, error;
  EXPECT_FALSE(ResolveModelPath("/etc/hosts", {}, &resolved, &error));
  EXPECT_NE(error.find("--model-root"), std::string::npos);
}

TEST(BuildRequestTest, SimulatedRequestBecomesWorkerArguments) {
  BuildRequest r;
  std::string error;
  ASSERT_TRUE(ParseInto(R"({"simulate":"small-cnn","seed":4,"speed":2.5,"timeout":"30m"})", {}, &r, &error))
      << error;
  EXPECT_EQ(WorkerArguments(r, ""),
            (std::vector<std::string>{"build", "--simulate", "small-cnn", "--seed", "4", "--speed", "2.5",
                                      "--timeout", "30m", "--progress", "json", "--no-history"}));
}

// Issue 37: every build is given its GPU's fleet timing cache unless it opts out or
// names its own; the worker finds the cache of its builder and GPU in the folder.
TEST(BuildRequestTest, BuildsGetTheFleetTimingCacheUnlessTheRequestSaysNo) {
  const WorkerFolders fleet{.timing_caches = "/art/timing-caches", .timing_cache_max_bytes = 1024};
  BuildRequest r;
  std::string error;
  ASSERT_TRUE(ParseInto(R"({"simulate":"small-cnn"})", {}, &r, &error)) << error;
  EXPECT_EQ(WorkerArguments(r, "", fleet),
            (std::vector<std::string>{"build", "--simulate", "small-cnn", "--seed", "1", "--speed", "1",
                                      "--timing-cache", "auto", "--timing-cache-dir", "/art/timing-caches",
                                      "--timing-cache-max-size", "1024B", "--progress", "json", "--no-history"}));
  ASSERT_TRUE(ParseInto(R"({"simulate":"small-cnn","timing_cache":false})", {}, &r, &error)) << error;
  EXPECT_EQ(WorkerArguments(r, "", fleet),
            (std::vector<std::string>{"build", "--simulate", "small-cnn", "--seed", "1", "--speed", "1", "--progress",
                                      "json", "--no-history"}));
  EXPECT_NE(r.json.find("\"timing_cache\":false"), std::string::npos) << r.json;
  EXPECT_FALSE(ParseInto(R"({"simulate":"small-cnn","timing_cache":"yes"})", {}, &r, &error));
  EXPECT_NE(error.find("true or false"), std::string::npos) << error;
}

TEST_F(ModelPathTest, ARequestNamingItsOwnTimingCacheIsNotGivenTheFleets) {
  fs::create_directories(base_ / "data" / "caches");
  RequestPaths paths{roots_, fs::canonical(base_ / "data").string(), ""};
  BuildRequest r;
  std::string error;
  ASSERT_TRUE(ParseInto(R"({"model":"sub/net.onnx","options":{"timing-cache":"mine.cache"}})", paths, &r, &error))
      << error;
  EXPECT_FALSE(r.UsesFleetTimingCache());
  const std::vector<std::string> args = WorkerArguments(r, "/e", {.timing_caches = "/art/timing-caches"});
  EXPECT_EQ(std::count(args.begin(), args.end(), "--timing-cache"), 1);
  EXPECT_EQ(std::count(args.begin(), args.end(), "--timing-cache-dir"), 0);
  EXPECT_FALSE(ParseInto(R"({"model":"sub/net.onnx","options":{"noBuilderCache":true},"timing_cache":true})", paths,
                         &r, &error));
  EXPECT_NE(error.find("give one or the other"), std::string::npos) << error;
}

TEST_F(ModelPathTest, RealBuildsUseTheEngineCacheUnlessTheRequestSaysNo) {
  RequestPaths paths{roots_, "", ""};
  BuildRequest r;
  std::string error;
  ASSERT_TRUE(ParseInto(R"({"model":"sub/net.onnx"})", paths, &r, &error)) << error;
  const std::string model = fs::canonical(base_ / "root/sub/net.onnx").string();
  EXPECT_EQ(WorkerArguments(r, "/e", {.engine_cache = "/data/engine-cache"}),
            (std::vector<std::string>{"build", model, "-o", "/e", "--engine-cache", "/data/engine-cache", "--progress",
                                      "json", "--no-history"}));
  ASSERT_TRUE(ParseInto(R"({"model":"sub/net.onnx","cache":false})", paths, &r, &error)) << error;
  EXPECT_EQ(WorkerArguments(r, "/e", {.engine_cache = "/data/engine-cache"}),
            (std::vector<std::string>{"build", model, "-o", "/e", "--no-engine-cache", "--progress", "json",
                                      "--no-history"}));
  EXPECT_NE(r.json.find("\"cache\":false"), std::string::npos) << r.json;
  EXPECT_FALSE(ParseInto(R"({"model":"sub/net.onnx","cache":"no"})", paths, &r, &error));
  EXPECT_NE(error.find("true or false"), std::string::npos) << error;
}

TEST(BuildRequestTest, RefusesWhatItCannotRun) {
  BuildRequest r;
  std::string error;
  EXPECT_FALSE(ParseInto(R"({"simulate":"../../etc/passwd"})", {}, &r, &error));
  EXPECT_FALSE(ParseInto(R"({"simulate":"small-cnn","timeout":"-5s"})", {}, &r, &error));
  EXPECT_FALSE(ParseInto(R"({"simulate":"small-cnn","speed":1e9})", {}, &r, &error));
  EXPECT_FALSE(ParseInto(R"({"model":"x.onnx"})", {}, &r, &error));
  EXPECT_NE(error.find("--model-root"), std::string::npos);
  EXPECT_FALSE(ParseInto("{", {}, &r, &error));
}

// Why #2: options come from an explicit list; paths among them stay inside the roots.
TEST_F(ModelPathTest, BuildOptionsAreAnAllowListWithConfinedPaths) {
  fs::create_directories(base_ / "data" / "caches");
  RequestPaths paths{roots_, fs::canonical(base_ / "data").string(), ""};
  auto parse = [&](const std::string& options, BuildRequest* r, std::string* error) {
    return ParseInto(R"({"model":"sub/net.onnx","options":)" + options + "}", paths, r, error);
  };
  BuildRequest r;
  std::string error;
  ASSERT_TRUE(parse(R"({"fp16":true,"memPoolSize":"workspace:1G","minShapes":"x:1x3","maxThreads":4})", &r, &error))
      << error;
  EXPECT_EQ(WorkerArguments(r, "/e"),
            (std::vector<std::string>{"build", fs::canonical(base_ / "root/sub/net.onnx").string(), "-o", "/e",
                                      "--fp16", "--maxThreads", "4", "--memPoolSize", "workspace:1G", "--minShapes",
                                      "x:1x3", "--progress", "json", "--no-history"}));
  for (const char* refused : {R"({"onnx":"/etc/shadow"})", R"({"saveEngine":"/tmp/e"})", R"({"colour":"red"})",
                              R"({"events":"/tmp/x"})", R"({"simulate":"small-cnn"})"}) {
    EXPECT_FALSE(parse(refused, &r, &error)) << refused;
    EXPECT_NE(error.find("unknown option"), std::string::npos) << error;
  }
  EXPECT_FALSE(parse(R"({"fp16":"yes"})", &r, &error));
  EXPECT_NE(error.find("flag"), std::string::npos);
  // Caches: relative ones under DATA/caches; absolute ones inside a root or the data dir.
  ASSERT_TRUE(parse(R"({"timing-cache":"net.cache"})", &r, &error)) << error;
  EXPECT_EQ(r.options.back().second, fs::canonical(base_ / "data" / "caches").string() + "/net.cache");
  ASSERT_TRUE(parse(R"({"timing-cache":")" + (base_ / "root" / "t.cache").string() + "\"}", &r, &error)) << error;
  for (const std::string& escape : {std::string("/tmp/t.cache"), (base_ / "outside" / "t.cache").string(),
                                    std::string("../t.cache"), std::string("/") + std::string(2040, 'x') + "/c",
                                    (base_ / "root" / "link.onnx").string(), (base_ / "root" / "sub").string()}) {
    EXPECT_FALSE(parse(R"({"timing-cache":")" + escape + "\"}", &r, &error)) << escape;
  }
}

TEST(TokenTest, MatchesOnlyTheExactToken) {
  EXPECT_TRUE(TokenMatches("0123456789abcdef", "0123456789abcdef"));
  EXPECT_FALSE(TokenMatches("0123456789abcdeF", "0123456789abcdef"));
  EXPECT_FALSE(TokenMatches("0123456789abcde", "0123456789abcdef"));
  EXPECT_FALSE(TokenMatches("0123456789abcdef0", "0123456789abcdef"));
  EXPECT_FALSE(TokenMatches("", "0123456789abcdef"));
}

TEST(RouteTest, PathsNameTheirEndpoints) {
  EXPECT_EQ(RouteOf("/healthz").endpoint, Endpoint::kHealth);
  EXPECT_EQ(RouteOf("/metrics").endpoint, Endpoint::kMetrics);
  EXPECT_EQ(RouteOf("/openapi.json").endpoint, Endpoint::kOpenApi);
  EXPECT_EQ(RouteOf("/mcp").endpoint, Endpoint::kMcp);
  EXPECT_EQ(RouteOf("/builds").endpoint, Endpoint::kBuilds);
  const Route build = RouteOf("/builds/b_1");
  EXPECT_EQ(build.endpoint, Endpoint::kBuild);
  EXPECT_EQ(build.id, "b_1");
  EXPECT_EQ(RouteOf("/builds/b_1/cancel").endpoint, Endpoint::kBuildCancel);
  EXPECT_EQ(RouteOf("/builds/b_1/events").endpoint, Endpoint::kBuildEvents);
  EXPECT_EQ(RouteOf("/builds/b_1/trace").endpoint, Endpoint::kBuildTrace);
  EXPECT_EQ(RouteOf("/builds/changes").endpoint, Endpoint::kBuildChanges);
  EXPECT_EQ(RouteOf("/history").endpoint, Endpoint::kHistory);
  EXPECT_EQ(RouteOf("/history/report").endpoint, Endpoint::kHistoryReport);
  EXPECT_EQ(RouteOf("/builds/b_1/compare").endpoint, Endpoint::kBuildCompare);
  EXPECT_EQ(RouteOf("/builds/b_1/compare").id, "b_1");
  for (const char* path : {"", "/", "/builds/b_1/logs", "/builds/b_1/cancel/x", "/build", "/healthz/", "/mcp/x"}) {
    EXPECT_EQ(RouteOf(path).endpoint, Endpoint::kNotFound) << path;
  }
}

TEST(ListQueryTest, ReadsStatusesLimitAndCursorAndNamesWhatIsWrong) {
  ListQuery q;
  std::string error;
  ASSERT_TRUE(ParseListQuery("/builds?status=queued%2Crunning&limit=5&&cursor=12", &q, &error)) << error;
  EXPECT_EQ(q.statuses, (std::vector<std::string>{"queued", "running"}));
  EXPECT_EQ(q.limit, 5);
  EXPECT_EQ(q.cursor, 12);
  ListQuery defaults;
  ASSERT_TRUE(ParseListQuery("/builds", &defaults, &error));
  EXPECT_EQ(defaults.limit, 20);
  struct Case {
    const char* target;
    const char* names;
  };
  for (const Case& c : {Case{"/builds?status=%zz", "percent-encoding"}, Case{"/builds?status=done", "unknown status"},
                        Case{"/builds?limit=0", "limit"}, Case{"/builds?limit=201", "limit"},
                        Case{"/builds?cursor=-1", "cursor"}, Case{"/builds?sort=id", "unknown query parameter"}}) {
    ListQuery bad;
    error.clear();
    EXPECT_FALSE(ParseListQuery(c.target, &bad, &error)) << c.target;
    EXPECT_NE(error.find(c.names), std::string::npos) << c.target << ": " << error;
  }
}

TEST(ListQueryTest, FiltersByModel) {
  ListQuery q;
  std::string error;
  ASSERT_TRUE(ParseListQuery("/builds?model=resnet%2050&status=failed", &q, &error)) << error;
  EXPECT_EQ(q.model, "resnet 50");
  EXPECT_FALSE(ParseListQuery("/builds?model=", &q, &error));
  EXPECT_NE(error.find("model"), std::string::npos) << error;
}

TEST(HistoryQueryTest, ReadsItsFiltersAndNamesWhatIsWrong) {
  HistoryFilter f;
  std::string error;
  const std::string key(64, 'c');
  ASSERT_TRUE(ParseHistoryQuery("/history?model=small&key=" + key + "&since=2h&limit=7", HistoryRoute::kList, &f, &error))
      << error;
  EXPECT_EQ(f.model, "small");
  EXPECT_EQ(f.key, key);
  EXPECT_DOUBLE_EQ(f.since_seconds, 7200);
  EXPECT_EQ(f.limit, 7);
  HistoryFilter defaults;
  ASSERT_TRUE(ParseHistoryQuery("/history", HistoryRoute::kList, &defaults, &error));
  EXPECT_EQ(defaults.limit, 100);
  struct Case {
    const char* target;
    HistoryRoute route;
    const char* names;
  };
  for (const Case& c : {Case{"/history?limit=0", HistoryRoute::kList, "limit must be an integer from 1 to 1000"},
                        Case{"/history?limit=1001", HistoryRoute::kList, "limit"},
                        Case{"/history?key=ABC", HistoryRoute::kList, "64 lowercase hex digits"},
                        Case{"/history?since=soon", HistoryRoute::kList, "since must be a duration"},
                        Case{"/history?since=0s", HistoryRoute::kList, "since"},
                        Case{"/history?model=", HistoryRoute::kList, "model"},
                        Case{"/history?colour=red", HistoryRoute::kList, "use model, key, since or limit"},
                        Case{"/history/report?limit=5", HistoryRoute::kReport, "use model or since"},
                        Case{"/history/report?key=" "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
                             HistoryRoute::kReport, "use model or since"}}) {
    HistoryFilter bad;
    error.clear();
    EXPECT_FALSE(ParseHistoryQuery(c.target, c.route, &bad, &error)) << c.target;
    EXPECT_NE(error.find(c.names), std::string::npos) << c.target << ": " << error;
  }
}

TEST(CompareQueryTest, TakesAnotherBuildsIdOnly) {
  std::string with;
  std::string error;
  ASSERT_TRUE(ParseCompareQuery("/builds/b_1/compare", &with, &error));
  EXPECT_EQ(with, "");
  const std::string other = "b_" + std::string(32, 'a');
  ASSERT_TRUE(ParseCompareQuery("/builds/b_1/compare?with=" + other, &with, &error)) << error;
  EXPECT_EQ(with, other);
  EXPECT_FALSE(ParseCompareQuery("/builds/b_1/compare?with=../x", &with, &error));
  EXPECT_NE(error.find("with must be a build id"), std::string::npos) << error;
  EXPECT_FALSE(ParseCompareQuery("/builds/b_1/compare?against=x", &with, &error));
  EXPECT_NE(error.find("the only one is with"), std::string::npos) << error;
}

TEST(BearerTokenTest, SchemeIsCaseInsensitiveThenSpaces) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bEaReR   abc"), "abc");
  EXPECT_FALSE(BearerToken("Bearer"));
  EXPECT_FALSE(BearerToken("Bearerabc"));
  EXPECT_FALSE(BearerToken("Basic abc"));
  EXPECT_FALSE(BearerToken(""));
}

TEST(CancelBodyTest, GraceIsANumberOrADurationUpToAnHour) {
  std::optional<double> grace;
  std::string error;
  EXPECT_TRUE(ParseCancelBody(" \n", &grace, &error));
  EXPECT_FALSE(grace);
  EXPECT_TRUE(ParseCancelBody(R"({"grace": "30s"})", &grace, &error));
  EXPECT_EQ(grace, 30);
  for (const char* body : {"[]", R"({"grace": -1})", R"({"grace": "2h"})", R"({"wait": 1})", "{"}) {
    error.clear();
    EXPECT_FALSE(ParseCancelBody(body, &grace, &error)) << body;
    EXPECT_FALSE(error.empty()) << body;
  }
}

// Issue 22: {"grace": 0} and 1e-300 were accepted while "0s" was refused. One rule for
// numbers and texts, the CLI's and the body's: 0, or 1 ms to 1 h.
TEST(CancelBodyTest, GraceHasOneRuleForNumbersAndTexts) {
  for (const char* body : {R"({"grace": 0})", R"({"grace": "0s"})", R"({"grace": "0"})", R"({"grace": "0ms"})"}) {
    std::optional<double> grace;
    std::string error;
    EXPECT_TRUE(ParseCancelBody(body, &grace, &error)) << body << ": " << error;
    EXPECT_EQ(grace, 0.0) << body;
  }
  for (const char* body : {R"({"grace": 1e-300})", R"({"grace": "1e-300s"})", R"({"grace": 0.0004})",
                           R"({"grace": 3600.5})", R"({"grace": "61m"})", R"({"grace": true})"}) {
    std::optional<double> grace;
    std::string error;
    EXPECT_FALSE(ParseCancelBody(body, &grace, &error)) << body;
    EXPECT_NE(error.find("0 (SIGKILL right after SIGTERM) or from 1ms to 1h"), std::string::npos) << error;
  }
  EXPECT_EQ(ParseGraceText("0s").outcome, GraceResult::Outcome::kOk);
  EXPECT_EQ(ParseGraceText("1h").seconds, 3600);
  EXPECT_EQ(ParseGraceText("0.5").seconds, 0.5);
  EXPECT_EQ(ParseGraceText("1e-300").outcome, GraceResult::Outcome::kInvalid);
  EXPECT_EQ(GraceFromSeconds(1e-300).outcome, GraceResult::Outcome::kInvalid);
}

// Issue 22, RFC 8259 section 4 ("The names within an object SHOULD be unique"):
// duplicates were read last-wins. Every body parser refuses them, naming the key.
TEST(JsonBodyTest, DuplicateKeysAreRefusedNamingTheKeyAtAnyDepth) {
  EXPECT_EQ(ParseJsonBody(R"({"a": 1, "b": {"a": 2}})").outcome, JsonBody::Outcome::kOk);
  EXPECT_EQ(ParseJsonBody(R"([{"a": 1}, {"a": 2}])").outcome, JsonBody::Outcome::kOk);
  const JsonBody top = ParseJsonBody(R"({"grace": 1, "grace": 2})");
  EXPECT_EQ(top.outcome, JsonBody::Outcome::kDuplicateKey);
  EXPECT_NE(top.error.find("duplicate key \"grace\""), std::string::npos) << top.error;
  EXPECT_NE(top.error.find("RFC 8259"), std::string::npos) << top.error;
  const JsonBody nested = ParseJsonBody(R"({"options": {"fp16": true, "fp16": false}})");
  EXPECT_EQ(nested.outcome, JsonBody::Outcome::kDuplicateKey);
  EXPECT_NE(nested.error.find("\"fp16\""), std::string::npos) << nested.error;
  EXPECT_EQ(ParseJsonBody("{").outcome, JsonBody::Outcome::kNotJson);
  EXPECT_EQ(ParseJsonBody("\"\xFF\"").outcome, JsonBody::Outcome::kNotJson);
}

TEST(JsonBodyTest, TheBuildRequestAndTheCancelBodyRefuseDuplicateKeys) {
  BuildRequest r;
  std::string error;
  EXPECT_FALSE(ParseInto(R"({"simulate": "small-cnn", "simulate": "large-transformer"})", {}, &r, &error));
  EXPECT_NE(error.find("duplicate key \"simulate\""), std::string::npos) << error;
  std::optional<double> grace;
  error.clear();
  EXPECT_FALSE(ParseCancelBody(R"({"grace": "5s", "grace": 0})", &grace, &error));
  EXPECT_NE(error.find("duplicate key \"grace\""), std::string::npos) << error;
  EXPECT_FALSE(grace);
}

// Issue 22: client text reaches the record only bounded. A timeout of any length
// ("000...01h") is kept as its normal form, not as the client wrote it.
TEST(BuildRequestTest, TheRecordKeepsTheTimeoutInItsNormalForm) {
  BuildRequest r;
  std::string error;
  const std::string body = R"({"simulate": "small-cnn", "timeout": ")" + std::string(3 << 20, '0') + R"(1h"})";
  ASSERT_TRUE(ParseInto(body, {}, &r, &error)) << error.substr(0, 200);
  EXPECT_EQ(r.timeout, "1h");
  EXPECT_LT(r.json.size(), 200u) << r.json.substr(0, 200);
}

TEST(GroupRouteTest, GroupPathsAndTheGroupFilterOfTheBuildList) {
  const Route group = RouteOf("/groups/g_1");
  EXPECT_EQ(group.endpoint, Endpoint::kGroup);
  EXPECT_EQ(group.id, "g_1");
  EXPECT_EQ(RouteOf("/groups/g_1/cancel").endpoint, Endpoint::kGroupCancel);
  EXPECT_EQ(RouteOf("/groups/g_1/manifest").endpoint, Endpoint::kGroupManifest);
  const Route engine = RouteOf("/groups/g_1/engines/resnet50.h200.sm90.engine");
  EXPECT_EQ(engine.endpoint, Endpoint::kGroupEngine);
  EXPECT_EQ(engine.file, "resnet50.h200.sm90.engine");
  for (const char* path : {"/groups", "/groups/", "/groups/g_1/engines", "/groups/g_1/x", "/groups/g_1/engines/a/b"}) {
    EXPECT_EQ(RouteOf(path).endpoint, Endpoint::kNotFound) << path;
  }
  ListQuery q;
  std::string error;
  const std::string gid = "g_0123456789abcdef0123456789abcdef";
  ASSERT_TRUE(ParseListQuery("/builds?group=" + gid + "&status=failed", &q, &error)) << error;
  EXPECT_EQ(q.group, gid);
  ListQuery bad;
  EXPECT_FALSE(ParseListQuery("/builds?group=g_1", &bad, &error));
  EXPECT_NE(error.find("g_ and 32 hex digits"), std::string::npos) << error;
}

}  // namespace
}  // namespace trtwatch::service
