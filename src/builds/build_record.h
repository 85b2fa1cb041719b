// BuildRecord: what the service keeps about one build, and its JSON document (the
// body of GET /builds/{id}, also the form stored in the record store).
//
// Threading: a value type; the service mutates records on its event-loop thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <trtwatch/result.h>

#include "builds/record_cache.h"

namespace trtwatch::builds {

enum class BuildState : uint8_t {
  kQueued,
  kRunning,
  kCancelling,
  kSucceeded,
  kFailed,
  kCancelled,
  kTimedOut,
  kInterrupted,
};

std::string_view BuildStateName(BuildState state);
bool ParseBuildState(std::string_view name, BuildState* state);
inline bool IsFinal(BuildState s) {
  return s != BuildState::kQueued && s != BuildState::kRunning && s != BuildState::kCancelling;
}

// Bounds of the texts a record and its events keep (cut by BoundedText, protocol/utf8.h,
// ending "… [cut]"): a client's text (a cancel message with its reason) and a worker's
// (an error, a log message). Documented in docs/api.md.
inline constexpr size_t kMaxClientText = 4096;
inline constexpr size_t kMaxWorkerText = 16384;
inline constexpr size_t kMaxUserText = 64;  // a user's name (submitted_by, cancelled_by)

// A build's job on a cluster scheduler (the Slurm executor, builds/executors/slurm_executor.h):
// what the record shows, and what a later service process needs to follow the job again.
struct JobPlace {
  std::string executor;  // "slurm"; empty: the build has no job (a local worker)
  std::string id;        // the scheduler's job id; empty until submitted
  std::string stream;    // the file the job writes its event stream to (shared filesystem)
  std::string state;     // the scheduler's state of the job: PENDING, RUNNING, ... NODE_FAIL
  std::string pending_reason;  // while pending: why (Resources, Priority, ...)
  std::string node;
  std::string cuda_visible_devices;  // as the job saw them (the local executor: the GPU's UUID)
  std::string gpu_pci_bus_id;        // the local executor's GPU, by PCI bus id
  std::string slurm_job_gpus;

  bool operator==(const JobPlace&) const = default;
};

// A build started as one of a group's (POST /builds with "targets", builds/build_groups.h):
// the group's id and the GPU type this member builds for.
struct GroupTag {
  std::string id;      // "g_..."
  std::string target;  // "h200"

  bool operator==(const GroupTag&) const = default;
};

struct BuildRecord {
  std::string id;
  BuildState state = BuildState::kQueued;
  std::string backend;       // "simulated" | "tensorrt"
  std::string request_json;  // the accepted request, normalised (a JSON object)
  std::string model;         // resolved model path (real builds)
  double created_at = 0;     // Unix seconds; 0 = not yet
  double started_at = 0;
  double finished_at = 0;
  std::string cancel_reason;  // "api" | "signal" (the service is stopping); empty = never asked
  std::string cancel_message;
  double cancel_requested_at = 0;
  double cancel_grace = 0;    // seconds the worker had to stop before SIGKILL
  std::string cancel_stop;    // "cooperative" | "forced" (SIGKILL after the grace); empty until over
  std::string cancel_latency_json = "null";  // from build_finish: {"to_first_false", "to_return"}
  std::string phase_json = "null";           // the live phase snapshot (PhaseSnapshotJson)
  std::string estimate_json = "null";        // the last estimate event (EstimateRecordJson)
  std::string history_key;                   // the build key's digest, from build_start or build_finish
  uint64_t last_seq = 0;                     // events in the log
  std::string error;
  std::string engine;  // stored engine path (real builds that succeeded)
  std::optional<uint64_t> engine_bytes;  // its size
  std::string engine_sha256;             // its digest (hex), as its ETag
  // The timing cache the build wrote (its "timing-cache" option), as a copy taken when
  // the build ended: later builds may change the original.
  std::string timing_cache;
  uint64_t timing_cache_bytes = 0;
  std::string timing_cache_sha256;
  // The fleet timing cache the build was given (its name in ARTIFACT_DIR/timing-caches),
  // as its worker said at its start; empty: none.
  std::string fleet_timing_cache;
  // The engine cache's answer, as the worker's build_start and build_finish gave it;
  // absent where the build used no cache (simulated, "cache": false, not started yet).
  std::optional<RecordCache> cache;
  int worker_pid = 0;  // while running: the worker (and its process group)
  JobPlace job;        // where a scheduler runs it
  // Why it ended as it did where a scheduler ended it ("slurm_node_fail", ...: the
  // executor's verdict); empty otherwise.
  std::string end_reason;
  std::optional<int> exit_code;
  std::optional<int> exit_signal;
  std::optional<GroupTag> group;  // none: a build of its own
  // Who submitted and who cancelled it: users of the service (its --users file, its
  // --token-file's "admin"). Empty: no credentials were asked for, the record predates
  // users, or (cancelled_by) the service cancelled it itself (stopping, a follower
  // gone, a budget). JSON null when empty.
  std::string submitted_by;
  std::string cancelled_by;
};

std::string RecordToJson(const BuildRecord& record);
// The record's "estimate": {"remaining", "based_on", "longer_than_history", "t"} of an
// estimate event given `t` seconds into the build.
std::string EstimateRecordJson(const Estimate& estimate, double t);
// Whether `key` is a build key's digest: 64 lowercase hex digits.
bool IsKeyDigest(std::string_view key);
// Parses a stored document back (restart recovery). Returns false if it is not one.
bool RecordFromJson(std::string_view json, BuildRecord* record);

// RFC 3339 UTC with milliseconds, e.g. "2026-11-30T03:45:12.345Z".
std::string FormatTime(double unix_seconds);

}  // namespace trtwatch::builds
