// ProgressTracker: a build's record, sampled a few times a second, turned into MCP
// progress notifications (`progress`, `total` when known, `message`).
//
// The unit is the outermost phase's steps ("Building engine" has 6): `total` is its step
// count once it has started, and the whole part of `progress` is its completed steps.
// The fraction is the nested steps of the current step along the one active chain
// (none while several phases run at once), so it is a count, never a time estimate.
// MCP requires every notification's progress to be larger than the last; when the
// count has not grown (a new child phase restarts its fraction, or TensorRT is silent)
// yet there is something new to say, the value creeps by a hundredth of what is left
// before the next whole step, and the message says what is true ("no progress callback
// for 40 s"). A report with nothing new is not sent. While a running build has an
// estimate with a range (docs/history.md), the message ends with it.
//
// Threading: a value type used by one thread.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace trtwatch::mcp {

struct ProgressReport {
  double progress = 0;
  std::optional<double> total;
  std::string message;
};

// Where a build is, read from its record document: "Timing graph nodes 47/83 ›
// Building engine 2/6", or "queued", "starting". Empty if the record says nothing.
struct Position {
  std::string where;
  double count = 0;  // completed outer steps plus the nested fraction
  std::optional<double> total;
};
Position PositionOf(const nlohmann::json& record);

// The record's estimate in words, as the terminal says it ("about 4–6 min left, from 7
// earlier builds", sinks/format.h), as of when it was given; empty without a range.
std::string EstimateTextOf(const nlohmann::json& record);

class ProgressTracker {
 public:
  // Silence notices repeat this often (seconds without an event) while it lasts.
  static constexpr double kSilenceNotice = 10;

  // The next notification for `record`, or nothing if there is nothing new to say.
  // `silent_for` is the time since the build's last event (0 if unknown).
  std::optional<ProgressReport> Next(const nlohmann::json& record, double silent_for);

 private:
  std::optional<ProgressReport> Emit(double count, std::optional<double> total, std::string message);

  double last_ = -1;  // the last progress sent; -1 = none yet
  std::optional<double> total_;
  std::string last_message_;
  int silence_notices_ = 0;  // within the current silent stretch
};

}  // namespace trtwatch::mcp
