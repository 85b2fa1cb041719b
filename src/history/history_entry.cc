#include "history/history_entry.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "history/phase_family.h"
#include "protocol/utf8.h"

namespace trtwatch::history {

using json = nlohmann::json;

namespace {

double Rounded(double seconds) { return std::round(seconds * 1e3) / 1e3; }

// Thrown while reading a line; caught in EntryFromJson and turned into its error.
struct BadField : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string Text(const json& j, const char* key) {
  if (!j.contains(key)) return "";
  if (!j[key].is_string()) throw BadField(std::string(key) + " is not a string");
  return ValidBoundedText(j[key].get_ref<const std::string&>(), kMaxTextBytes);
}

double Duration(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) throw BadField(std::string(key) + " is not a number");
  const double value = j[key].get<double>();
  if (!std::isfinite(value) || value < 0 || value > 1e9) throw BadField(std::string(key) + " is out of range");
  return value;
}

int64_t Count(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number_integer()) throw BadField(std::string(key) + " is not an integer");
  const int64_t value = j[key].get<int64_t>();
  if (value < 0) throw BadField(std::string(key) + " is negative");
  return value;
}

const json& Array(const json& j, const char* key, size_t max) {
  static const json kEmpty = json::array();
  if (!j.contains(key)) return kEmpty;
  if (!j[key].is_array()) throw BadField(std::string(key) + " is not an array");
  if (j[key].size() > max) throw BadField(std::string(key) + " holds more than " + std::to_string(max) + " items");
  return j[key];
}

bool LowercaseHex(std::string_view text) {
  return !text.empty() && text.size() <= 128 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

std::vector<FamilyTime> FamiliesOf(const std::vector<PhaseSummary>& phases) {
  std::map<std::string, FamilyTime> by_family;
  for (const PhaseSummary& phase : phases) {
    const std::string family = PhaseFamily(phase.phase);
    FamilyTime& time = by_family[family];
    time.family = family;
    time.count += phase.count;
    time.seconds += phase.seconds;
    time.self_seconds += phase.self_seconds;
  }
  std::vector<FamilyTime> families;
  for (auto& [name, time] : by_family) families.push_back(std::move(time));
  std::stable_sort(families.begin(), families.end(),
                   [](const FamilyTime& a, const FamilyTime& b) { return a.seconds > b.seconds; });
  if (families.size() > kMaxFamilies) families.resize(kMaxFamilies);
  return families;
}

std::string EntryToJson(const HistoryEntry& entry) {
  json parts = json::array();
  for (const auto& [name, value] : entry.key_parts) parts.push_back({{"name", name}, {"value", value}});
  json families = json::array();
  for (const FamilyTime& f : entry.families) {
    families.push_back({{"family", f.family},
                        {"count", f.count},
                        {"seconds", Rounded(f.seconds)},
                        {"self", Rounded(f.self_seconds)}});
  }
  json sequence = json::array();
  for (const PhaseSpan& span : entry.sequence) {
    sequence.push_back(
        {{"family", span.family}, {"depth", span.depth}, {"start", Rounded(span.start)}, {"end", Rounded(span.end)},
         {"steps", span.steps}});
  }
  json events = json::array();
  for (const std::string& line : entry.events) {
    events.push_back(json::parse(line, nullptr, /*allow_exceptions=*/false));
  }
  const json j = {{"build", entry.build},
                  {"key", entry.key},
                  {"key_parts", parts},
                  {"backend", entry.backend},
                  {"model", entry.model},
                  {"finished_at", entry.finished_at},
                  {"elapsed", Rounded(entry.elapsed)},
                  {"status", BuildStatusName(entry.status)},
                  {"error", entry.error},
                  {"families", families},
                  {"sequence", sequence},
                  {"events", events}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

ParsedEntry EntryFromJson(std::string_view line) {
  ParsedEntry parsed;
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    parsed.error = "not a JSON object";
    return parsed;
  }
  try {
    HistoryEntry entry;
    entry.build = Text(j, "build");
    entry.key = Text(j, "key");
    if (!LowercaseHex(entry.key)) throw BadField("key is not a lowercase hex digest");
    for (const json& part : Array(j, "key_parts", 64)) entry.key_parts.emplace_back(Text(part, "name"), Text(part, "value"));
    entry.backend = Text(j, "backend");
    entry.model = Text(j, "model");
    entry.finished_at = Count(j, "finished_at");
    entry.elapsed = Duration(j, "elapsed");
    if (!ParseBuildStatus(Text(j, "status"), &entry.status)) throw BadField("status is not a build status");
    entry.error = Text(j, "error");
    for (const json& f : Array(j, "families", kMaxFamilies)) {
      entry.families.push_back(
          FamilyTime{Text(f, "family"), Count(f, "count"), Duration(f, "seconds"), Duration(f, "self")});
    }
    for (const json& s : Array(j, "sequence", kMaxSequence)) {
      PhaseSpan span{Text(s, "family"), static_cast<int>(std::min<int64_t>(Count(s, "depth"), kSequenceDepth)),
                     Duration(s, "start"), Duration(s, "end"),
                     static_cast<int32_t>(std::min<int64_t>(s.contains("steps") ? Count(s, "steps") : 0, INT32_MAX))};
      if (span.end < span.start) throw BadField("sequence: a phase ends before it starts");
      entry.sequence.push_back(std::move(span));
    }
    for (const json& e : Array(j, "events", kMaxEventsKept)) {
      if (!e.is_object()) throw BadField("events: an event is not a JSON object");
      entry.events.push_back(e.dump(-1, ' ', false, json::error_handler_t::replace));
    }
    parsed.entry = std::move(entry);
  } catch (const std::exception& e) {  // BadField, or a JSON type mismatch
    parsed.error = e.what();
  }
  return parsed;
}

}  // namespace trtwatch::history
