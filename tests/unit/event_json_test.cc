#include "protocol/event_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace trtwatch {
namespace {

TEST(EventJsonTest, PhaseStartOfARootHasNullParentAndAllFields) {
  Event e;
  e.type = EventType::kPhaseStart;
  e.seq = 3;
  e.t = 1.23456789;
  e.id = 4;
  e.phase = "Building engine";
  e.total = 6;
  const auto j = nlohmann::json::parse(EventToJson(e));
  EXPECT_EQ(j["v"], 1);
  EXPECT_EQ(j["seq"], 3);
  EXPECT_DOUBLE_EQ(j["t"].get<double>(), 1.234568);
  EXPECT_EQ(j["type"], "phase_start");
  EXPECT_TRUE(j["parent"].is_null());
  EXPECT_EQ(j["phase"], "Building engine");
  EXPECT_EQ(j["total"], 6);
}

TEST(EventJsonTest, EveryTypeRoundTrips) {
  std::vector<Event> events(10);
  for (size_t i = 0; i < events.size(); ++i) {
    events[i].type = static_cast<EventType>(i);
    events[i].seq = i + 1;
    events[i].t = 0.5 * static_cast<double>(i);
  }
  events[0].build = "b_1";
  events[0].backend = "simulated";
  events[0].model = "simulated:small-cnn";
  events[0].facts = {{"simulated", "true"}};
  events[1].id = 2;
  events[1].parent = 1;
  events[1].phase = "p";
  events[1].total = 4;
  events[2].id = 2;
  events[2].phase = "p";
  events[2].step = 3;
  events[2].total = 4;
  events[3].id = 2;
  events[3].phase = "p";
  events[3].completed = 2;
  events[3].total = 4;
  events[3].elapsed = 1.5;
  events[3].early = true;
  events[4].reason = CancelReason::kTimeout;
  events[4].message = "budget";
  events[5].silent_for = 30;
  events[6].severity = Severity::kError;
  events[6].message = "Error Code 2: \"quoted\"\n";
  events[7].status = BuildStatus::kTimedOut;
  events[7].error = "budget";
  events[7].cancel_latency = CancelLatency{0.01, 0.02};
  events[7].phases = {PhaseSummary{"p", 1, 1, 1.5, 0.25}};
  events[7].anomalies.step_out_of_range = 2;
  events[7].dropped = 5;
  events[8].estimate.remaining = Estimate::Remaining{240, 300, 360};
  events[8].estimate.builds = 7;
  events[8].estimate.match = "similar";
  events[8].estimate.longer_than_history = true;
  events[9].type = EventType::kEstimate;  // too little history: no range
  events[9].estimate.builds = 2;
  for (const Event& e : events) {
    Event back;
    std::string error;
    ASSERT_TRUE(EventFromJson(EventToJson(e), &back, &error)) << error;
    EXPECT_EQ(EventToJson(back), EventToJson(e));
  }
}

TEST(EventJsonTest, AnEstimateCarriesItsRangeAndWhatItIsBasedOn) {
  Event e;
  e.type = EventType::kEstimate;
  e.seq = 4;
  e.estimate.remaining = Estimate::Remaining{240, 300.5, 360};
  e.estimate.builds = 7;
  const auto j = nlohmann::json::parse(EventToJson(e));
  EXPECT_EQ(j["type"], "estimate");
  EXPECT_DOUBLE_EQ(j["remaining"]["p50"].get<double>(), 300.5);
  EXPECT_EQ(j["based_on"]["builds"], 7);
  EXPECT_EQ(j["based_on"]["match"], "exact");
  Event bad;
  std::string error;
  EXPECT_FALSE(EventFromJson(R"({"v":1,"seq":1,"t":0,"type":"estimate","remaining":null,)"
                             R"("based_on":{"builds":1,"match":"roughly"}})",
                             &bad, &error));
  EXPECT_NE(error.find("based_on.match"), std::string::npos) << error;
}

TEST(EventJsonTest, PhaseSummariesCarrySelfTimeAndOldDocumentsDefaultItToTheTotal) {
  Event e;
  e.type = EventType::kBuildFinish;
  e.seq = 9;
  e.status = BuildStatus::kSucceeded;
  e.phases = {PhaseSummary{"Building engine", 1, 0, 8.5, 2.0}, PhaseSummary{"Timing", 2, 0, 2.5, 2.5}};
  const auto j = nlohmann::json::parse(EventToJson(e));
  ASSERT_EQ(j["phases"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["phases"][0]["seconds"].get<double>(), 8.5);
  EXPECT_DOUBLE_EQ(j["phases"][0]["self"].get<double>(), 2.0);
  Event back;
  std::string error;
  ASSERT_TRUE(EventFromJson(EventToJson(e), &back, &error)) << error;
  ASSERT_EQ(back.phases.size(), 2u);
  EXPECT_DOUBLE_EQ(back.phases[0].self_seconds, 2.0);
  EXPECT_DOUBLE_EQ(back.phases[1].self_seconds, 2.5);

  // A log written before "self" existed.
  const char* old = R"({"v":1,"seq":9,"t":8.5,"type":"build_finish","status":"succeeded","error":null,)"
                    R"("elapsed":8.5,"cancel_latency":null,)"
                    R"("phases":[{"phase":"Building engine","count":1,"early":0,"seconds":8.5}]})";
  ASSERT_TRUE(EventFromJson(old, &back, &error)) << error;
  ASSERT_EQ(back.phases.size(), 1u);
  EXPECT_DOUBLE_EQ(back.phases[0].seconds, 8.5);
  EXPECT_DOUBLE_EQ(back.phases[0].self_seconds, 8.5);
}

TEST(EventJsonTest, RejectsWhatIsNotAnEvent) {
  Event e;
  std::string error;
  EXPECT_FALSE(EventFromJson("not json", &e, &error));
  EXPECT_FALSE(EventFromJson(R"({"v":2,"seq":1,"t":0,"type":"stall","silent_for":1})", &e, &error));
  EXPECT_NE(error.find("version"), std::string::npos);
  EXPECT_FALSE(EventFromJson(R"({"v":1,"seq":1,"t":0,"type":"party"})", &e, &error));
  EXPECT_NE(error.find("party"), std::string::npos);
}

// Found by fuzz/event_json_fuzz: numbers that do not fit their field were converted
// with undefined behaviour; now they are refused with a message naming the field.
TEST(EventJsonTest, RejectsNumbersOutsideTheirFieldsRange) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"id":2,"phase":"T","seq":4999999999999999999999999,"step":1,"t":0.03,"total":3,"type":"step","v":1})", "seq"},
      {R"({"id":2,"phase":"T","seq":4,"step":1,"t":0.03,"total":3e40,"type":"step","v":1})", "total"},
      {R"({"id":2,"phase":"T","seq":4,"step":2147483648,"t":0.03,"total":3,"type":"step","v":1})", "step"},
      {R"({"id":2,"phase":"T","seq":-4,"step":1,"t":0.03,"total":3,"type":"step","v":1})", "seq"},
      {R"({"id":1.5,"phase":"T","seq":4,"step":1,"t":0.03,"total":3,"type":"step","v":1})", "id"},
      {R"({"id":2,"phase":"T","seq":4,"step":1,"t":0.03,"total":3,"type":"step","v":1e300})", "v"},
  };
  for (const auto& [line, field] : cases) {
    Event event;
    std::string error;
    EXPECT_FALSE(EventFromJson(line, &event, &error)) << line;
    EXPECT_NE(error.find(field), std::string::npos) << line << ": " << error;
  }
}

// Found by fuzzing: t = 1.1e306 was read, then written as null (its microsecond
// rounding overflowed), so the line written back did not parse again.
TEST(EventJsonTest, HugeTimesAreWrittenBackAsTheyCame) {
  for (const char* t : {"1.1e306", "1.7976931348623157e308", "-1e300", "123456789012.5"}) {
    const std::string line = std::string(R"({"id":1,"parent":null,"phase":"B","seq":2,"t":)") + t +
                             R"(,"total":6,"type":"phase_start","v":1})";
    Event event;
    std::string error;
    ASSERT_TRUE(EventFromJson(line, &event, &error)) << line << ": " << error;
    const std::string once = EventToJson(event);
    Event again;
    ASSERT_TRUE(EventFromJson(once, &again, &error)) << once << ": " << error;
    EXPECT_EQ(again.t, event.t) << once;
    EXPECT_EQ(EventToJson(again), once);
  }
}

TEST(EventJsonTest, InvalidUtf8InAMessageStillGivesValidJson) {
  Event e;
  e.type = EventType::kLog;
  e.message = "bad \xff byte";
  EXPECT_TRUE(nlohmann::json::parse(EventToJson(e)).is_object());
}

TEST(EventJsonTest, BuildStartAndFinishCarryTheKeyAndTheCacheOnlyWhenKnown) {
  const std::string key(64, 'a');
  for (EventType type : {EventType::kBuildStart, EventType::kBuildFinish}) {
    Event plain;
    plain.type = type;
    plain.seq = 1;
    const auto without = nlohmann::json::parse(EventToJson(plain));
    EXPECT_FALSE(without.contains("key") || without.contains("cache") || without.contains("cache_age_seconds"));

    Event hit = plain;
    hit.cache = {key, "hit", 259200.5, 842.25};
    const std::string line = EventToJson(hit);
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["key"], key);
    EXPECT_EQ(j["cache"], "hit");
    EXPECT_DOUBLE_EQ(j["cache_age_seconds"].get<double>(), 259200.5);
    EXPECT_DOUBLE_EQ(j["cache_built_seconds"].get<double>(), 842.25);
    Event back;
    std::string error;
    ASSERT_TRUE(EventFromJson(line, &back, &error)) << error;
    EXPECT_EQ(back.cache.key, key);
    EXPECT_EQ(back.cache.state, "hit");
    EXPECT_EQ(back.cache.built_seconds, 842.25);
  }
  Event e;
  std::string error;
  EXPECT_FALSE(EventFromJson(R"({"v":1,"seq":1,"t":0,"type":"build_start","build":"b","backend":"tensorrt","model":"m","key":"../x"})", &e, &error));
  EXPECT_NE(error.find("\"key\""), std::string::npos) << error;
  EXPECT_FALSE(EventFromJson(R"({"v":1,"seq":1,"t":0,"type":"build_start","build":"b","backend":"tensorrt","model":"m","cache":"maybe"})", &e, &error));
  EXPECT_NE(error.find("hit or miss"), std::string::npos) << error;
}

}  // namespace
}  // namespace trtwatch
