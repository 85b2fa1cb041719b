// One event of the public stream (docs/events.md). A flat value type: each type uses
// the fields its row of the protocol table names and leaves the rest at defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/build_result.h"
#include "core/cancellation.h"

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
};

std::string_view EventTypeName(EventType type);
bool ParseEventType(std::string_view name, EventType* type);

// Structural events are never dropped or coalesced on the way to a sink.
inline bool IsStructural(EventType type) {
  return type != EventType::kStep && type != EventType::kLog && type != EventType::kStall;
}

// TensorRT's ILogger::Severity, in its order.
enum class Severity : uint8_t { kInternalError, kError, kWarning, kInfo, kVerbose };

std::string_view SeverityName(Severity severity);
bool ParseSeverity(std::string_view name, Severity* severity);

inline constexpr int kProtocolVersion = 1;
inline constexpr int64_t kNoPhase = 0;  // phase ids start at 1; 0 is "none" (JSON null)

struct Event {
  EventType type = EventType::kLog;
  uint64_t seq = 0;  // strictly increasing per build; assigned at delivery
  double t = 0;      // seconds since the build started

  // build_start
  std::string build;
  std::string backend;
  std::string model;
  Facts facts;

  // phase_start, step, phase_finish
  int64_t id = kNoPhase;
  int64_t parent = kNoPhase;
  std::string phase;
  int32_t total = 0;
  int32_t step = 0;       // step: zero-based, as TensorRT reports it
  int32_t completed = 0;  // phase_finish: steps reported complete
  double elapsed = 0;     // phase_finish, build_finish
  bool early = false;     // phase_finish: finished before its last step

  // cancel_requested
  CancelReason reason = CancelReason::kUser;
  std::string message;  // cancel_requested, log

  // stall
  double silent_for = 0;

  // log
  Severity severity = Severity::kInfo;

  // build_finish
  BuildStatus status = BuildStatus::kFailed;
  std::string error;
  std::optional<CancelLatency> cancel_latency;
  std::vector<PhaseSummary> phases;
  Anomalies anomalies;
  uint64_t dropped = 0;  // events this consumer did not receive
};

}  // namespace trtwatch
