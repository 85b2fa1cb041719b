#include "sinks/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trtwatch {

std::string Fact(const Facts& facts, const std::string& key) {
  for (const auto& [k, v] : facts) {
    if (k == key) return v;
  }
  return "";
}

std::string FormatDuration(double seconds) {
  char buf[32];
  if (seconds < 0) seconds = 0;
  if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.1fs", std::floor(seconds * 10) / 10);
  } else if (seconds < 3600) {
    const long s = static_cast<long>(seconds);
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else {
    const long m = static_cast<long>(seconds / 60);
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", m / 60, m % 60);
  }
  return buf;
}

std::string FormatAge(double seconds) {
  static constexpr struct {
    double seconds;
    const char* name;
  } kUnits[] = {{86400, "day"}, {3600, "hour"}, {60, "minute"}, {1, "second"}};
  for (const auto& unit : kUnits) {
    const long count = static_cast<long>(std::max(seconds, 0.0) / unit.seconds);
    if (count >= 1 || unit.seconds == 1) {
      return std::to_string(count) + " " + unit.name + (count == 1 ? "" : "s");
    }
  }
  return "0 seconds";
}

std::string FormatReuse(const CacheUse& cache) {
  if (cache.state != "hit") return "";
  std::string text = "reused the engine built";
  if (cache.age_seconds) text += " " + FormatAge(*cache.age_seconds) + " ago";
  if (cache.built_seconds) text += " in " + FormatDuration(*cache.built_seconds);
  return text + " (engine cache, key " + cache.key.substr(0, 12) + ")";
}

namespace {

// "20–35 s", "4–6 min", "2–3 h": the low end rounded down, the high end up, never equal.
std::string RangeText(double low, double high, const char* dash) {
  double unit = 1;
  double step = 5;
  const char* name = " s";
  if (high >= 7200) {
    unit = 3600;
    step = 1;
    name = " h";
  } else if (high >= 90) {
    unit = 60;
    step = 1;
    name = " min";
  }
  const long lo = static_cast<long>(std::floor(low / unit / step) * step);
  long hi = static_cast<long>(std::ceil(high / unit / step) * step);
  if (hi <= lo) hi = lo + static_cast<long>(step);
  return std::to_string(lo) + dash + std::to_string(hi) + name;
}

}  // namespace

std::string EstimateText(const Estimate& estimate, double since, bool unicode) {
  const std::string builds = std::to_string(estimate.builds) + " earlier build" + (estimate.builds == 1 ? "" : "s");
  const std::string where = estimate.match == "similar" ? " on similar GPUs" : "";
  if (!estimate.remaining) {
    return "no ETA: " + builds + " of this model and GPU" + where + " (3 needed)";
  }
  const double low = std::max(0.0, estimate.remaining->p10 - since);
  const double high = std::max(0.0, estimate.remaining->p90 - since);
  std::string text = "about " + RangeText(low, high, unicode ? "\u2013" : "-") + " left, ";
  if (estimate.longer_than_history) return text + "longer than any of the " + builds + where;
  return text + "from " + builds + where;
}

std::string BuildTitle(const std::string& backend, const std::string& model, const Facts& facts) {
  if (backend == "replay") {
    return "REPLAY of build " + Fact(facts, "replay_of") + " (" + BuildTitle(Fact(facts, "replay_of_backend"), model) +
           ")";
  }
  const std::string build = backend.empty() ? "build" : backend + " build";
  return model.empty() ? build : build + " of " + model;
}

std::string StatusPhrase(BuildStatus status) {
  switch (status) {
    case BuildStatus::kSucceeded:
      return "build succeeded";
    case BuildStatus::kFailed:
      return "build failed";
    case BuildStatus::kCancelled:
      return "build cancelled";
    case BuildStatus::kTimedOut:
      return "build timed out";
  }
  return "build ended";
}

namespace {
std::string Millis(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f ms", seconds * 1000);
  return buf;
}
}  // namespace

std::string FormatCancelLatency(const CancelLatency& latency) {
  std::string text = "cancel latency: ";
  text += latency.to_first_false ? Millis(*latency.to_first_false) + " to the builder's next step"
                                 : std::string("no step boundary reached");
  text += ", " + Millis(latency.to_return) + " until it returned";
  return text;
}

}  // namespace trtwatch
