// The service's build history (docs/history.md): what a worker learns from it and what
// the store keeps of each build.
//
// A worker computes the build key; the service cannot. So each build gets a folder of
// its own (DATA_DIR/history-work/<id>, on the shared filesystem for cluster jobs) with
// a history file seeded from the store: the newest successful builds of the same
// backend and model, their event logs left out. The worker (`--history DIR`) estimates
// from them and appends its own entry when it ends. The manager then takes that entry
// back as untrusted input (history::HistoryFile::Read checks and bounds every field),
// names it by the service's id, stores it and removes the folder. History never makes
// a build fail: every problem is a warning.
//
// Bounds: the store keeps the newest kMaxHistoryEntries, none older than
// kMaxHistoryAgeDays (as the local history's defaults).
//
// Threading: the manager's event-loop thread (these use the store).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "builds/stores/record_store.h"
#include "history/history_entry.h"

namespace trtwatch::builds {

inline constexpr int64_t kMaxHistoryEntries = 1000;
inline constexpr int64_t kMaxHistoryAgeDays = 90;
inline constexpr int kMaxSeededEntries = 50;  // the estimator uses the newest 20 of a key

// The folder of build `id` under the service's data dir.
std::string HistoryWorkFolder(const std::string& data_dir, const std::string& id);

// The model a history entry names for a request: "simulated:PROFILE" for a simulated
// build (as the simulator reports it), else the resolved model path.
std::string HistoryModelOf(const std::string& simulate, const std::string& resolved_model);

struct SeedResult {
  enum class Outcome { kSeeded, kNotSeeded };
  Outcome outcome = Outcome::kNotSeeded;
  size_t entries = 0;
  std::string warning;  // kNotSeeded: why (the build runs without history)
};

// Makes `folder` and writes the store's earlier entries of `backend` and `model` into it.
SeedResult SeedHistoryFolder(RecordStore& store, const std::string& folder, const std::string& backend,
                             const std::string& model, int64_t now_unix);

struct HarvestResult {
  enum class Outcome { kFound, kNone };
  Outcome outcome = Outcome::kNone;
  std::optional<history::HistoryEntry> entry;  // kFound: the worker's, named `service_id`
  std::string warning;  // kNone: why there is none (a worker that never ended, a damaged line)
};

// The entry the worker appended to `folder` (the last one that is not a seed).
HarvestResult HarvestHistoryFolder(const std::string& folder, const std::string& service_id);

struct HistoryStoreResult {
  enum class Outcome { kStored, kNotStored };
  Outcome outcome = Outcome::kNotStored;
  std::string warning;
};

// Stores `entry` (its event log left out) and prunes the history to its bounds.
// `lease_generation` nonzero: stored only under that lease of the build (HistoryRow).
HistoryStoreResult StoreHistoryEntry(RecordStore& store, history::HistoryEntry entry, int64_t now_unix,
                                     int64_t lease_generation = 0);

// Removes the folder; a folder that cannot be removed is left (a warning).
std::string RemoveHistoryFolder(const std::string& folder);

}  // namespace trtwatch::builds
