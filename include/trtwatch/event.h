// One event of trtwatch's stream (protocol v1, docs/events.md) and its JSON form.
//
// A flat value type: each event type uses the fields its row of the protocol table
// names and leaves the rest at their defaults. Events reach sinks (<trtwatch/sink.h>)
// in `seq` order on a delivery thread, never on TensorRT's threads. Copy them freely.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <trtwatch/result.h>

namespace trtwatch {

enum class EventType : uint8_t {
  kBuildStart,
  kPhaseStart,
  kStep,
  kPhaseFinish,
  kCancelRequested,
  kStall,
  kLog,
  kBuildFinish,
  kEstimate,
};

// "build_start", "phase_start", "step", "phase_finish", "cancel_requested", "stall",
// "log", "build_finish", "estimate".
std::string_view EventTypeName(EventType type);
bool ParseEventType(std::string_view name, EventType* type);

// Structural events are never dropped or coalesced on the way to a sink; steps of one
// phase coalesce (latest wins) and logs and stalls may be dropped when a sink lags.
inline bool IsStructural(EventType type) {
  return type != EventType::kStep && type != EventType::kLog && type != EventType::kStall;
}

// TensorRT's ILogger::Severity, in its order.
enum class Severity : uint8_t { kInternalError, kError, kWarning, kInfo, kVerbose };

// "internal_error", "error", "warning", "info", "verbose".
std::string_view SeverityName(Severity severity);
bool ParseSeverity(std::string_view name, Severity* severity);

inline constexpr int kProtocolVersion = 1;
inline constexpr int64_t kNoPhase = 0;  // phase ids start at 1; 0 is "none" (JSON null)

struct Event {
  EventType type = EventType::kLog;
  uint64_t seq = 0;  // strictly increasing per build, from 1
  double t = 0;      // seconds since the build started, monotonic

  // build_start
  std::string build;    // the build's id
  std::string backend;  // "tensorrt", "simulated", "replay"
  std::string model;
  Facts facts;

  // build_start, build_finish: the build key and the engine cache's answer
  CacheUse cache;

  // phase_start, step, phase_finish
  int64_t id = kNoPhase;      // this phase instance; names are display text, not keys
  int64_t parent = kNoPhase;  // phase_start: the parent instance, kNoPhase at the top
  std::string phase;          // the phase's name as TensorRT gave it
  int32_t total = 0;
  int32_t step = 0;       // step: zero-based, as TensorRT reports it
  int32_t completed = 0;  // phase_finish: steps reported complete
  double elapsed = 0;     // phase_finish, build_finish: seconds
  bool early = false;     // phase_finish: finished before its last step

  // cancel_requested
  CancelReason reason = CancelReason::kUser;
  std::string message;  // cancel_requested, log

  // stall
  double silent_for = 0;  // seconds since the last progress callback

  // log
  Severity severity = Severity::kInfo;

  // estimate
  Estimate estimate;

  // build_finish
  BuildStatus status = BuildStatus::kFailed;
  std::string error;
  std::optional<CancelLatency> cancel_latency;
  std::vector<PhaseSummary> phases;
  Anomalies anomalies;
  uint64_t dropped = 0;  // events this consumer did not receive
};

// The event as one line of JSON (no trailing newline), exactly as `trtwatch build
// --progress json` writes it. Invalid UTF-8 in names and messages is replaced, so the
// line is always valid JSON.
std::string EventToJson(const Event& event);

// Parses one line of the stream. On failure returns false and says why in `*error`.
bool EventFromJson(std::string_view line, Event* event, std::string* error);

}  // namespace trtwatch
