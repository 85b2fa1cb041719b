// The history's JSON documents as `trtwatch history|report|compare --json` print them
// and the service's GET /history, /history/report and /builds/{id}/compare answer
// (docs/history.md, docs/api.md): one shape wherever a user reads them.
//
// Threading: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "history/history_entry.h"
#include "history/report.h"

namespace trtwatch::history {

// {"build","key","model","backend","finished_at","elapsed","status","error","families"}
nlohmann::json EntryJson(const HistoryEntry& entry);
// {"key","model","backend","builds","succeeded","elapsed","trend","families","regressions"}
nlohmann::json ReportJson(const KeyReport& report);
// {"before","after","before_elapsed","after_elapsed","families","verdict"}
nlohmann::json ComparisonJson(const Comparison& comparison);

}  // namespace trtwatch::history
