// What the record stores share beyond their SQL: the data dir's preparation, the
// paging rule of List, and Prune's "is there a policy at all".
//
// Threading: pure functions (PrepareDataDir touches the file system).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "builds/stores/record_store.h"

namespace trtwatch::builds {

// PutHistory's refusal of a fenced row whose lease generation is not the build's.
inline constexpr const char* kHistoryFenced =
    "refused: the build's lease is another replica's now (this replica lost it)";

// Makes `dir` (engines, worker files, and SQLite's database) and narrows it to this
// user: records and engines name models. Empty, or the problem and the fix.
std::string PrepareDataDir(const std::string& dir);

// A List page from rows (creation order, document) read newest first with LIMIT
// limit + 1: the extra row only tells that another page follows.
RecordStore::Page PageOf(std::vector<std::pair<int64_t, std::string>> rows, int limit);

// Whether Prune has anything to do: some final status, and an age or a count limit.
inline bool PrunePolicyGiven(const std::vector<std::string>& final_statuses, const std::string& finished_before,
                             int64_t keep_newest) {
  return !final_statuses.empty() && (!finished_before.empty() || keep_newest > 0);
}

}  // namespace trtwatch::builds
