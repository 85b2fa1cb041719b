// One finished build as the history keeps it (docs/history.md), and its JSON line.
//
// What later builds learn from: the build key (digest and its parts), when it ended,
// how long it took and how it ended, the time per phase family (total and self), the
// top-level phase sequence with start and end offsets (what the estimator aligns a
// live build with), and the build's event log, bounded.
//
// Threading: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/build_result.h"
#include "core/event.h"

namespace trtwatch::history {

// Bounds on what one entry holds, so that an entry stays a few tens of KiB.
inline constexpr size_t kMaxEventsKept = 200;  // of the event log (steps are never kept)
inline constexpr size_t kMaxSequence = 500;    // top-level phases
inline constexpr size_t kMaxFamilies = 200;
inline constexpr size_t kMaxTextBytes = 1024;  // any one name, error or key part

// Phases this shallow are the "top level" the sequence keeps: the root and four levels
// under it (TensorRT puts its whole build under one root phase, and most of it several
// levels down, under "Computing profile costs" and "Timing graph nodes"). Deeper phases
// repeat per layer or tactic and would only crowd the sequence.
inline constexpr int kSequenceDepth = 4;

struct FamilyTime {
  std::string family;  // history::PhaseFamily of the phase names
  int64_t count = 0;
  double seconds = 0;
  double self_seconds = 0;
};

// One top-level phase: seconds from the build's start.
struct PhaseSpan {
  std::string family;
  int depth = 0;
  double start = 0;
  double end = 0;
  int32_t steps = 0;  // the phase's step count as it started: the work it announced
};

struct HistoryEntry {
  std::string build;       // the build's id
  std::string key;         // the build key's digest (lowercase hex)
  Facts key_parts;         // what the key is made of: backend, model digest, GPU, ...
  std::string backend;
  std::string model;
  int64_t finished_at = 0;  // Unix seconds
  double elapsed = 0;
  BuildStatus status = BuildStatus::kFailed;
  std::string error;
  std::vector<FamilyTime> families;  // most time first
  std::vector<PhaseSpan> sequence;   // in start order
  std::vector<std::string> events;   // event lines (JSON), bounded; steps left out
};

// A result's phases folded into families (names differing only in their numbers
// count as one), most time first, at most kMaxFamilies.
std::vector<FamilyTime> FamiliesOf(const std::vector<PhaseSummary>& phases);

// The entry as one JSON line (no newline).
std::string EntryToJson(const HistoryEntry& entry);

struct ParsedEntry {
  std::optional<HistoryEntry> entry;
  std::string error;  // no entry: what is wrong with the line
};

// Checks and bounds every field of a line read back (the file is outside input).
ParsedEntry EntryFromJson(std::string_view line);

}  // namespace trtwatch::history
