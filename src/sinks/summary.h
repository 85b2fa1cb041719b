// The end-of-build summary: status, cancel latency, the phases that took the most
// time (total and self time: the total less the phases' children), counts. Pure: lines of text from the build_finish event.
#pragma once

#include <string>
#include <vector>

#include "core/event.h"

namespace trtwatch {

struct SummaryOptions {
  size_t top_phases = 8;
};

std::vector<std::string> FormatSummary(const Event& build_finish, const SummaryOptions& options = {});

}  // namespace trtwatch
