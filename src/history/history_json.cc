#include "history/history_json.h"

namespace trtwatch::history {

using json = nlohmann::json;

json EntryJson(const HistoryEntry& entry) {
  json families = json::array();
  for (const FamilyTime& f : entry.families) {
    families.push_back({{"family", f.family}, {"count", f.count}, {"seconds", f.seconds}, {"self", f.self_seconds}});
  }
  return {{"build", entry.build},   {"key", entry.key},           {"model", entry.model},
          {"backend", entry.backend}, {"finished_at", entry.finished_at}, {"elapsed", entry.elapsed},
          {"status", BuildStatusName(entry.status)}, {"error", entry.error}, {"families", families}};
}

json ReportJson(const KeyReport& report) {
  const auto durations = [](const Durations& d) { return json{{"count", d.count}, {"median", d.median}, {"p90", d.p90}}; };
  json families = json::array();
  for (const FamilyReport& f : report.families) {
    families.push_back({{"family", f.family}, {"seconds", durations(f.total)}, {"self_share", f.self_share}});
  }
  json regressions = json::array();
  for (const Regression& r : report.regressions) {
    regressions.push_back({{"build", r.build}, {"elapsed", r.elapsed}, {"median_before", r.median_before}});
  }
  return {{"key", report.key},
          {"model", report.model},
          {"backend", report.backend},
          {"builds", report.builds},
          {"succeeded", report.succeeded},
          {"elapsed", durations(report.elapsed)},
          {"trend", report.trend ? json(*report.trend) : json(nullptr)},
          {"families", families},
          {"regressions", regressions}};
}

json ComparisonJson(const Comparison& comparison) {
  json families = json::array();
  for (const FamilyDelta& f : comparison.families) {
    families.push_back({{"family", f.family}, {"before", f.before}, {"after", f.after}});
  }
  return {{"before", comparison.before_label},
          {"after", comparison.after_label},
          {"before_elapsed", comparison.before_elapsed},
          {"after_elapsed", comparison.after_elapsed},
          {"families", families},
          {"verdict", comparison.verdict}};
}

}  // namespace trtwatch::history
