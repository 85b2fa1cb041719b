#include "sinks/plain_sink.h"

#include <cstdio>

#include "sinks/format.h"
#include "sinks/summary.h"

namespace trtwatch {

namespace {

std::string Steps(int32_t done, int32_t total) {
  return std::to_string(done) + "/" + std::to_string(total);
}

// The first line: what is built, and that a simulated build makes no engine.
std::string BuildStartText(const Event& e) {
  if (e.backend != "simulated") return BuildTitle(e.backend, e.model, e.facts);
  return "SIMULATED build of profile \"" + Fact(e.facts, "profile") + "\" (seed " + Fact(e.facts, "seed") +
         ", speed " + Fact(e.facts, "speed") + "x): no TensorRT, no GPU, no engine is written";
}

}  // namespace

void PlainSink::Line(double t, int depth, const std::string& text) {
  std::fprintf(out_, "[%8s] %s%s\n", FormatDuration(t).c_str(), std::string(2 * depth, ' ').c_str(),
               text.c_str());
}

void PlainSink::OnEvent(const Event& e) {
  // Depth comes from the tree as it stands before a finish removes the phase.
  const PhaseNode* node = tree_.Find(e.id);
  const int depth = node ? node->depth : 0;
  switch (e.type) {
    case EventType::kBuildStart:
      Line(e.t, 0, BuildStartText(e));
      break;
    case EventType::kPhaseStart:
      break;  // printed below, once the tree knows its depth
    case EventType::kStep: {
      if (!node) break;
      auto last = last_progress_.find(e.id);
      const double since = last == last_progress_.end() ? node->started_at : last->second;
      if (e.t - since >= progress_every_) {
        last_progress_[e.id] = e.t;
        Line(e.t, depth, e.phase + ": " + Steps(e.step + 1, e.total));
      }
      break;
    }
    case EventType::kPhaseFinish:
      last_progress_.erase(e.id);
      Line(e.t, depth,
           e.phase + (e.early ? ": stopped at " : ": done, ") + Steps(e.completed, e.total) + " steps in " +
               FormatDuration(e.elapsed));
      break;
    case EventType::kCancelRequested:
      Line(e.t, 0, "cancel requested (" + std::string(CancelReasonName(e.reason)) + "): " + e.message +
                       " - waiting for the builder to finish its current step");
      break;
    case EventType::kStall:
      Line(e.t, 0, "no progress callback for " + FormatDuration(e.silent_for) +
                       " (the builder can be busy inside one long step)");
      break;
    case EventType::kLog:
      Line(e.t, 0, std::string(SeverityName(e.severity)) + ": " + e.message);
      break;
    case EventType::kEstimate: {
      // Every estimate event would repeat itself in a log; a changed range is news.
      std::string text = EstimateText(e.estimate, 0, /*unicode=*/false);
      if (text != last_estimate_) Line(e.t, 0, text);
      last_estimate_ = std::move(text);
      break;
    }
    case EventType::kBuildFinish:
      for (const std::string& line : FormatSummary(e)) Line(e.t, 0, line);
      break;
  }
  tree_.Apply(e);
  if (e.type == EventType::kPhaseStart) {
    const PhaseNode* started = tree_.Find(e.id);
    Line(e.t, started ? started->depth : 0,
         e.phase + " (" + std::to_string(e.total) + (e.total == 1 ? " step)" : " steps)"));
  }
}

}  // namespace trtwatch
