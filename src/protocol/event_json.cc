#include "protocol/event_json.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

namespace trtwatch {

namespace {

using nlohmann::json;

// Microsecond resolution keeps lines short and is finer than any callback spacing.
// From 1e9 s on it is below a double's precision and s * 1e6 may overflow to inf (written
// as null): such a time, read from a hostile stream, is written back as it came.
double Seconds(double s) { return std::fabs(s) < 1e9 ? std::round(s * 1e6) / 1e6 : s; }

json PhaseId(int64_t id) { return id == kNoPhase ? json(nullptr) : json(id); }

// Every anomaly counter with its protocol name.
constexpr std::pair<const char*, int64_t Anomalies::*> kAnomalyFields[] = {
    {"null_name", &Anomalies::null_name},
    {"bad_step_count", &Anomalies::bad_step_count},
    {"unknown_parent", &Anomalies::unknown_parent},
    {"step_unknown_phase", &Anomalies::step_unknown_phase},
    {"step_out_of_range", &Anomalies::step_out_of_range},
    {"finish_unknown_phase", &Anomalies::finish_unknown_phase},
    {"unfinished_phases", &Anomalies::unfinished_phases},
    {"after_build", &Anomalies::after_build},
};

json AnomaliesToJson(const Anomalies& a) {
  json j = json::object();
  for (const auto& [name, field] : kAnomalyFields) j[name] = a.*field;
  return j;
}

// An integer field, checked. nlohmann's get<int32_t>() of a float or of a number out of
// the type's range is undefined behaviour (found by fuzz/event_json_fuzz).
template <class T>
T Integer(const json& v, const char* key) {
  if (v.is_number_unsigned() && std::in_range<T>(v.get<uint64_t>())) return static_cast<T>(v.get<uint64_t>());
  if (v.is_number_integer() && !v.is_number_unsigned() && std::in_range<T>(v.get<int64_t>())) {
    return static_cast<T>(v.get<int64_t>());
  }
  throw std::out_of_range(std::string("\"") + key + "\" must be an integer from " +
                          std::to_string(std::numeric_limits<T>::min()) + " to " +
                          std::to_string(std::numeric_limits<T>::max()));
}

// An optional integer field; 0 when absent.
template <class T>
T OptionalInteger(const json& j, const char* key) {
  return j.contains(key) ? Integer<T>(j[key], key) : T{0};
}

Anomalies AnomaliesFromJson(const json& j) {
  Anomalies a;
  for (const auto& [name, field] : kAnomalyFields) a.*field = OptionalInteger<int64_t>(j, name);
  return a;
}

json OptionalSeconds(const std::optional<double>& s) {
  return s ? json(Seconds(*s)) : json(nullptr);
}

// The build key and the cache's answer (build_start, build_finish): fields present
// only when known, so a stream without a cache reads as before.
void CacheToJson(const CacheUse& cache, json& j) {
  if (!cache.key.empty()) j["key"] = cache.key;
  if (!cache.state.empty()) j["cache"] = cache.state;
  if (cache.age_seconds) j["cache_age_seconds"] = Seconds(*cache.age_seconds);
  if (cache.built_seconds) j["cache_built_seconds"] = Seconds(*cache.built_seconds);
}

CacheUse CacheFromJson(const json& j) {
  CacheUse cache;
  if (j.contains("key")) {
    cache.key = j["key"].get<std::string>();
    if (cache.key.size() != 64 || cache.key.find_first_not_of("0123456789abcdef") != std::string::npos) {
      throw std::invalid_argument("\"key\" must be 64 lowercase hex digits");
    }
  }
  if (j.contains("cache")) {
    cache.state = j["cache"].get<std::string>();
    if (cache.state != "hit" && cache.state != "miss") throw std::invalid_argument("\"cache\" must be hit or miss");
  }
  if (j.contains("cache_age_seconds")) cache.age_seconds = j["cache_age_seconds"].get<double>();
  if (j.contains("cache_built_seconds")) cache.built_seconds = j["cache_built_seconds"].get<double>();
  return cache;
}

}  // namespace

namespace {

void BuildStartToJson(const Event& e, json& j) {
  j["build"] = e.build;
  j["backend"] = e.backend;
  j["model"] = e.model;
  json facts = json::object();
  for (const auto& [key, value] : e.facts) facts[key] = value;
  j["facts"] = facts;
  CacheToJson(e.cache, j);
}

void EstimateToJson(const Estimate& estimate, json& j) {
  if (estimate.remaining) {
    j["remaining"] = {{"p10", Seconds(estimate.remaining->p10)},
                      {"p50", Seconds(estimate.remaining->p50)},
                      {"p90", Seconds(estimate.remaining->p90)}};
  } else {
    j["remaining"] = nullptr;
  }
  j["based_on"] = {{"builds", estimate.builds}, {"match", estimate.match}};
  j["longer_than_history"] = estimate.longer_than_history;
}

void BuildFinishToJson(const Event& e, json& j) {
  j["status"] = BuildStatusName(e.status);
  j["error"] = e.error.empty() ? json(nullptr) : json(e.error);
  j["elapsed"] = Seconds(e.elapsed);
  if (e.cancel_latency) {
    j["cancel_latency"] = {{"to_first_false", OptionalSeconds(e.cancel_latency->to_first_false)},
                           {"to_return", Seconds(e.cancel_latency->to_return)}};
  } else {
    j["cancel_latency"] = nullptr;
  }
  json phases = json::array();
  for (const PhaseSummary& p : e.phases) {
    phases.push_back({{"phase", p.phase},
                      {"count", p.count},
                      {"early", p.early},
                      {"seconds", Seconds(p.seconds)},
                      {"self", Seconds(p.self_seconds)}});
  }
  j["phases"] = phases;
  j["anomalies"] = AnomaliesToJson(e.anomalies);
  j["dropped"] = e.dropped;
  CacheToJson(e.cache, j);
}

// The fields of the phase events: start, step and finish.
void PhaseEventToJson(const Event& e, json& j) {
  j["id"] = e.id;
  if (e.type == EventType::kPhaseStart) j["parent"] = PhaseId(e.parent);
  j["phase"] = e.phase;
  if (e.type == EventType::kStep) j["step"] = e.step;
  if (e.type == EventType::kPhaseFinish) j["completed"] = e.completed;
  j["total"] = e.total;
  if (e.type == EventType::kPhaseFinish) {
    j["elapsed"] = Seconds(e.elapsed);
    j["early"] = e.early;
  }
}

}  // namespace

std::string EventToJson(const Event& e) {
  json j;
  j["v"] = kProtocolVersion;
  j["seq"] = e.seq;
  j["t"] = Seconds(e.t);
  j["type"] = EventTypeName(e.type);
  switch (e.type) {
    case EventType::kBuildStart:
      BuildStartToJson(e, j);
      break;
    case EventType::kPhaseStart:
    case EventType::kStep:
    case EventType::kPhaseFinish:
      PhaseEventToJson(e, j);
      break;
    case EventType::kCancelRequested:
      j["reason"] = CancelReasonName(e.reason);
      j["message"] = e.message;
      break;
    case EventType::kStall:
      j["silent_for"] = Seconds(e.silent_for);
      break;
    case EventType::kLog:
      j["severity"] = SeverityName(e.severity);
      j["message"] = e.message;
      break;
    case EventType::kEstimate:
      EstimateToJson(e.estimate, j);
      break;
    case EventType::kBuildFinish:
      BuildFinishToJson(e, j);
      break;
  }
  // Invalid UTF-8 in a TensorRT message must not make the line unwritable.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

// A phase id field: absent and null both mean "no phase".
int64_t PhaseIdFrom(const json& j, const char* key) {
  return j.contains(key) && !j[key].is_null() ? Integer<int64_t>(j[key], key) : kNoPhase;
}

void BuildStartFromJson(const json& j, Event& e) {
  e.build = j.at("build").get<std::string>();
  e.backend = j.at("backend").get<std::string>();
  e.model = j.at("model").get<std::string>();
  if (j.contains("facts")) {
    for (const auto& [key, value] : j["facts"].items()) {
      e.facts.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  e.cache = CacheFromJson(j);
}

// The fields of the phase events: start, step and finish.
void PhaseEventFromJson(const json& j, Event& e) {
  e.id = PhaseIdFrom(j, "id");
  if (e.type == EventType::kPhaseStart) e.parent = PhaseIdFrom(j, "parent");
  e.phase = j.at("phase").get<std::string>();
  if (e.type == EventType::kStep) e.step = Integer<int32_t>(j.at("step"), "step");
  if (e.type == EventType::kPhaseFinish) e.completed = Integer<int32_t>(j.at("completed"), "completed");
  e.total = Integer<int32_t>(j.at("total"), "total");
  if (e.type == EventType::kPhaseFinish) {
    e.elapsed = j.at("elapsed").get<double>();
    e.early = j.at("early").get<bool>();
  }
}

// The problem with the estimate's fields, empty if none.
[[nodiscard]] std::string EstimateFromJson(const json& j, Estimate& estimate) {
  if (!j.at("remaining").is_null()) {
    const json& r = j["remaining"];
    estimate.remaining =
        Estimate::Remaining{r.at("p10").get<double>(), r.at("p50").get<double>(), r.at("p90").get<double>()};
  }
  const json& based_on = j.at("based_on");
  estimate.builds = Integer<int64_t>(based_on.at("builds"), "builds");
  estimate.match = based_on.at("match").get<std::string>();
  if (estimate.match != "exact" && estimate.match != "similar") return "based_on.match must be \"exact\" or \"similar\"";
  estimate.longer_than_history = j.value("longer_than_history", false);
  return {};
}

// The problem with the build's last event, empty if none.
[[nodiscard]] std::string BuildFinishFromJson(const json& j, Event& e) {
  if (!ParseBuildStatus(j.at("status").get<std::string>(), &e.status)) return "unknown build status";
  e.error = j.at("error").is_null() ? "" : j["error"].get<std::string>();
  e.elapsed = j.at("elapsed").get<double>();
  if (j.contains("cancel_latency") && !j["cancel_latency"].is_null()) {
    const json& c = j["cancel_latency"];
    CancelLatency latency;
    if (!c.at("to_first_false").is_null()) latency.to_first_false = c["to_first_false"].get<double>();
    latency.to_return = c.at("to_return").get<double>();
    e.cancel_latency = latency;
  }
  for (const json& p : j.value("phases", json::array())) {
    PhaseSummary summary{p.at("phase").get<std::string>(), Integer<int64_t>(p.at("count"), "count"),
                         OptionalInteger<int64_t>(p, "early"), p.at("seconds").get<double>()};
    // "self" came later: a document without it says nothing of the children, so
    // all of the time counts as the phase's own.
    summary.self_seconds = p.contains("self") ? p["self"].get<double>() : summary.seconds;
    e.phases.push_back(std::move(summary));
  }
  if (j.contains("anomalies")) e.anomalies = AnomaliesFromJson(j["anomalies"]);
  e.dropped = OptionalInteger<uint64_t>(j, "dropped");
  e.cache = CacheFromJson(j);
  return {};
}

// The fields of e's type; the problem with them, empty if none.
[[nodiscard]] std::string TypedFieldsFromJson(const json& j, Event& e) {
  switch (e.type) {
    case EventType::kBuildStart:
      BuildStartFromJson(j, e);
      return {};
    case EventType::kPhaseStart:
    case EventType::kStep:
    case EventType::kPhaseFinish:
      PhaseEventFromJson(j, e);
      return {};
    case EventType::kCancelRequested:
      if (!ParseCancelReason(j.at("reason").get<std::string>(), &e.reason)) return "unknown cancel reason";
      e.message = j.value("message", "");
      return {};
    case EventType::kStall:
      e.silent_for = j.at("silent_for").get<double>();
      return {};
    case EventType::kLog:
      if (!ParseSeverity(j.at("severity").get<std::string>(), &e.severity)) return "unknown log severity";
      e.message = j.at("message").get<std::string>();
      return {};
    case EventType::kEstimate:
      return EstimateFromJson(j, e.estimate);
    case EventType::kBuildFinish:
      return BuildFinishFromJson(j, e);
  }
  return {};
}

}  // namespace

bool EventFromJson(std::string_view line, Event* out, std::string* error) {
  try {
    const json j = json::parse(line);
    if (!j.is_object()) {
      *error = "not a JSON object";
      return false;
    }
    if (!j.contains("v") || !j["v"].is_number_integer() || Integer<int64_t>(j["v"], "v") != kProtocolVersion) {
      *error = "unsupported protocol version (expected \"v\": 1)";
      return false;
    }
    Event e;
    if (!ParseEventType(j.at("type").get<std::string>(), &e.type)) {
      *error = "unknown event type \"" + j.at("type").get<std::string>() + "\"";
      return false;
    }
    e.seq = Integer<uint64_t>(j.at("seq"), "seq");
    e.t = j.at("t").get<double>();
    if (std::string problem = TypedFieldsFromJson(j, e); !problem.empty()) {
      *error = std::move(problem);
      return false;
    }
    *out = std::move(e);
    return true;
  } catch (const std::exception& ex) {
    *error = ex.what();
    return false;
  }
}

}  // namespace trtwatch
