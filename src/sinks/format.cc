#include "sinks/format.h"

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
