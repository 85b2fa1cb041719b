#include "sinks/summary.h"

#include <algorithm>
#include <cstdio>

#include "sinks/format.h"

namespace trtwatch {

std::vector<std::string> FormatSummary(const Event& e, const SummaryOptions& options) {
  std::vector<std::string> lines;
  std::string status = StatusPhrase(e.status) + " after " + FormatDuration(e.elapsed);
  if (!e.error.empty()) status += ": " + e.error;
  lines.push_back(status);
  if (const std::string reuse = FormatReuse(e.cache); !reuse.empty()) lines.push_back(reuse);
  if (e.cancel_latency) lines.push_back(FormatCancelLatency(*e.cancel_latency));

  if (!e.phases.empty()) {
    lines.push_back("phases by time (total includes child phases, self leaves them out):");
    char line[96];
    std::snprintf(line, sizeof line, "  %9s  %9s  %7s  %s", "total", "self", "count", "phase");
    lines.push_back(line);
    const size_t shown = std::min(options.top_phases, e.phases.size());
    for (size_t i = 0; i < shown; ++i) {
      const PhaseSummary& p = e.phases[i];
      std::snprintf(line, sizeof line, "  %9s  %9s  %6lldx  ", FormatDuration(p.seconds).c_str(),
                    FormatDuration(p.self_seconds).c_str(), static_cast<long long>(p.count));
      lines.push_back(line + p.phase + (p.early > 0 ? "  (" + std::to_string(p.early) + " stopped early)" : ""));
    }
    if (e.phases.size() > shown) {
      lines.push_back("  ... and " + std::to_string(e.phases.size() - shown) + " more phase names");
    }
  }
  int64_t instances = 0;
  for (const PhaseSummary& p : e.phases) instances += p.count;
  std::string counts = std::to_string(instances) + " phases, " + std::to_string(e.anomalies.Total()) +
                       " callback anomalies, " + std::to_string(e.dropped) + " events dropped by this view";
  lines.push_back(counts);
  return lines;
}

}  // namespace trtwatch
