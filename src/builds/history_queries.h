// The service's history looked back at (docs/api.md): GET /history, /history/report and
// /builds/{id}/compare answered from the store, with the documents `trtwatch history`,
// `report` and `compare --json` print (history/history_json.h).
//
// Threading: where the store is used (the service's event-loop thread).
#pragma once

#include <string>

#include "builds/stores/record_store.h"

namespace trtwatch::builds {

struct HistoryAnswer {
  enum class Outcome { kOk, kNotInHistory, kStorageError };
  Outcome outcome = Outcome::kStorageError;
  std::string body;   // kOk: the JSON document
  std::string error;  // otherwise: what is wrong, and what to do
};

// {"builds": [ENTRY, ...]}, newest first.
HistoryAnswer ListHistory(RecordStore& store, const HistoryQuery& query);
// {"keys": [REPORT, ...]}, over the newest entries the bounds keep (query.limit is ignored).
HistoryAnswer ReportHistory(RecordStore& store, HistoryQuery query);
// Build `id` against build `with`, or (`with` empty) against the median of its key's
// other successful builds. kNotInHistory: `id` or `with` is not in the history (still
// running, ended before its key was known), or there is nothing to compare with.
HistoryAnswer CompareBuilds(RecordStore& store, const std::string& id, const std::string& with);

}  // namespace trtwatch::builds
