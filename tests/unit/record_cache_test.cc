// The record's `cache` (builds/record_cache.h): what the worker's build_start and
// build_finish said, checked before a record keeps it, and its JSON round trip.
#include "builds/record_cache.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "builds/build_record.h"

namespace trtwatch::builds {
namespace {

using nlohmann::json;

const std::string kKey = "3e78f9d53e9c" + std::string(52, 'a');

CacheUse Hit() { return CacheUse{kKey, "hit", 259200.5, 842.25}; }

BuildRecord RecordWith(std::optional<RecordCache> cache) {
  BuildRecord r;
  r.id = "b_0123";
  r.state = BuildState::kSucceeded;
  r.backend = "tensorrt";
  r.request_json = R"({"model":"/m/net.onnx"})";
  r.cache = std::move(cache);
  return r;
}

TEST(RecordCacheTest, AHitRoundTripsThroughTheRecordDocument) {
  const RecordCacheReading reading = RecordCacheFromWorker(Hit());
  ASSERT_TRUE(reading.ok()) << reading.error;
  const BuildRecord r = RecordWith(reading.cache);
  const json doc = json::parse(RecordToJson(r));
  EXPECT_EQ(doc["cache"], json({{"state", "hit"}, {"key", kKey}, {"age_seconds", 259200.5}, {"built_seconds", 842.25}}));
  BuildRecord back;
  ASSERT_TRUE(RecordFromJson(RecordToJson(r), &back));
  EXPECT_EQ(back.cache, r.cache);
  EXPECT_EQ(RecordToJson(back), RecordToJson(r));
}

TEST(RecordCacheTest, AMissKeepsNoAgeAndRoundTrips) {
  CacheUse miss = Hit();
  miss.state = "miss";  // a worker's stray times on a miss are not kept
  const RecordCacheReading reading = RecordCacheFromWorker(miss);
  ASSERT_TRUE(reading.ok()) << reading.error;
  const BuildRecord r = RecordWith(reading.cache);
  const json doc = json::parse(RecordToJson(r));
  EXPECT_EQ(doc["cache"], json({{"state", "miss"}, {"key", kKey}, {"age_seconds", nullptr}, {"built_seconds", nullptr}}));
  BuildRecord back;
  ASSERT_TRUE(RecordFromJson(RecordToJson(r), &back));
  EXPECT_EQ(back.cache, r.cache);
}

TEST(RecordCacheTest, NoCacheIsNullAndReadsBackAsNone) {
  // "cache": false, a simulated build: no state, though the worker may have computed a key.
  const RecordCacheReading reading = RecordCacheFromWorker(CacheUse{kKey, "", std::nullopt, std::nullopt});
  EXPECT_TRUE(reading.ok());
  EXPECT_FALSE(reading.cache);
  const BuildRecord r = RecordWith(std::nullopt);
  EXPECT_TRUE(json::parse(RecordToJson(r))["cache"].is_null());
  BuildRecord back;
  ASSERT_TRUE(RecordFromJson(RecordToJson(r), &back));
  EXPECT_FALSE(back.cache);
  // Documents stored before records had a cache have no field at all.
  BuildRecord old;
  ASSERT_TRUE(RecordFromJson(R"({"id":"b_1","status":"succeeded"})", &old));
  EXPECT_FALSE(old.cache);
}

TEST(RecordCacheTest, BadWorkerValuesAreRefusedNamingTheValue) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* what;
    CacheUse use;
    const char* error;
  };
  const Case cases[] = {
      {"an unknown state", {kKey, "maybe", 1.0, 1.0}, "state"},
      {"a state with a trailing byte", {kKey, "hit\n", 1.0, 1.0}, "state"},
      {"no key", {"", "hit", 1.0, 1.0}, "key"},
      {"a short key", {kKey.substr(1), "miss", std::nullopt, std::nullopt}, "key"},
      {"a long key", {kKey + "0", "miss", std::nullopt, std::nullopt}, "key"},
      {"an uppercase key", {"3E78F9D53E9C" + std::string(52, 'A'), "hit", 1.0, 1.0}, "key"},
      {"a key with a non-hex byte", {std::string(63, 'a') + "g", "hit", 1.0, 1.0}, "key"},
      {"a key with a quote", {std::string(63, 'a') + "\"", "hit", 1.0, 1.0}, "key"},
      {"a negative age", {kKey, "hit", -1.0, 1.0}, "age_seconds"},
      {"a NaN age", {kKey, "hit", nan, 1.0}, "age_seconds"},
      {"an age past a century", {kKey, "hit", kMaxCacheSeconds * 2, 1.0}, "age_seconds"},
      {"an infinite build time", {kKey, "hit", 1.0, inf}, "built_seconds"},
      {"a negative build time", {kKey, "hit", 1.0, -0.5}, "built_seconds"},
  };
  for (const Case& c : cases) {
    const RecordCacheReading reading = RecordCacheFromWorker(c.use);
    EXPECT_FALSE(reading.ok()) << c.what;
    EXPECT_FALSE(reading.cache) << c.what;
    EXPECT_NE(reading.error.find(c.error), std::string::npos) << c.what << ": " << reading.error;
  }
}

TEST(RecordCacheTest, ADamagedStoredCacheReadsBackAsNone) {
  const std::string prefix = R"({"id":"b_1","status":"succeeded","cache":)";
  for (const std::string& cache :
       {std::string(R"("hit")"), std::string(R"({"state":"hit"})"), std::string(R"({"state":"hit","key":7})"),
        R"({"state":"gone","key":")" + kKey + R"("})",
        R"({"state":"hit","key":")" + kKey + R"(","age_seconds":"old"})",
        R"({"state":"hit","key":")" + kKey + R"(","age_seconds":-3})"}) {
    BuildRecord r;
    ASSERT_TRUE(RecordFromJson(prefix + cache + "}", &r)) << cache;
    EXPECT_FALSE(r.cache) << cache;
    EXPECT_TRUE(json::parse(RecordToJson(r))["cache"].is_null()) << cache;
  }
}

}  // namespace
}  // namespace trtwatch::builds
