// eta_score: the estimates trtwatch's history gives for recorded builds, and two
// baselines, at fixed points of each build (driven by bench/eta_calibration.py).
//
// usage: eta_score --checkpoints 0.1,0.25,0.5,0.75 LEARN.jsonl... -- SCORE.jsonl...
// Each file is one build's event stream (`trtwatch build --progress json`). The LEARN
// builds become the history; each SCORE build is replayed up to each checkpoint (a
// fraction of its duration) and scored there. Prints one JSON object per build and
// checkpoint: the true remaining time, history's p10/p50/p90, and the baselines':
// step-fraction extrapolation (elapsed x (1 - f) / f, f the root phase's steps done)
// and a tqdm-like smoothed rate (exponential average of the root's steps per second,
// smoothing 0.3, as tqdm's default).
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "history/build_recorder.h"
#include "history/estimator.h"
#include "protocol/event_json.h"

namespace {

using trtwatch::Event;
using trtwatch::EventType;

std::vector<Event> ReadEvents(const std::string& path) {
  std::ifstream in(path);
  std::vector<Event> events;
  std::string line;
  std::string error;
  while (std::getline(in, line)) {
    Event event;
    if (trtwatch::EventFromJson(line, &event, &error)) events.push_back(std::move(event));
  }
  return events;
}

double Elapsed(const std::vector<Event>& events) {
  for (const Event& event : events) {
    if (event.type == EventType::kBuildFinish) return event.elapsed;
  }
  return 0;
}

// The key is set by the caller: assigning a literal here trips GCC 12's -Wrestrict.
trtwatch::history::HistoryEntry Learn(const std::vector<Event>& events) {
  trtwatch::history::BuildRecorder recorder;
  for (const Event& event : events) recorder.OnEvent(event);
  trtwatch::BuildResult result;
  result.status = trtwatch::BuildStatus::kSucceeded;
  result.elapsed = Elapsed(events);
  return recorder.Entry(result);
}

struct Baselines {
  double step_fraction = -1;  // -1: no step of the root yet
  double smoothed_rate = -1;
};

Baselines BaselinesAt(const std::vector<Event>& events, double now) {
  Baselines baselines;
  int64_t root = trtwatch::kNoPhase;
  double rate = -1;
  double last_t = 0;
  int32_t done = 0;
  int32_t total = 0;
  for (const Event& event : events) {
    if (event.t > now) break;
    if (event.type == EventType::kPhaseStart && event.parent == trtwatch::kNoPhase && root == trtwatch::kNoPhase) {
      root = event.id;
      last_t = event.t;
      total = event.total;
    }
    if (event.id != root || event.type != EventType::kStep) continue;
    const int32_t steps = event.step + 1 - done;
    if (steps <= 0) continue;
    const double dt = event.t - last_t;
    if (dt > 0) {
      const double instant = steps / dt;
      rate = rate < 0 ? instant : 0.3 * instant + 0.7 * rate;
    }
    done = event.step + 1;
    last_t = event.t;
  }
  if (done > 0 && total > 0) {
    const double fraction = static_cast<double>(done) / total;
    baselines.step_fraction = now * (1 - fraction) / fraction;
    if (rate > 0) baselines.smoothed_rate = (total - done) / rate;
  }
  return baselines;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> checkpoints = {0.1, 0.25, 0.5, 0.75};
  std::vector<std::string> learn;
  std::vector<std::string> score;
  bool scoring = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      scoring = true;
    } else if (arg == "--checkpoints" && i + 1 < argc) {
      checkpoints.clear();
      std::stringstream list(argv[++i]);
      std::string item;
      while (std::getline(list, item, ',')) checkpoints.push_back(std::stod(item));
    } else {
      (scoring ? score : learn).push_back(arg);
    }
  }
  const std::string key = "0";
  std::vector<trtwatch::history::HistoryEntry> entries;
  for (const std::string& path : learn) {
    entries.push_back(Learn(ReadEvents(path)));
    entries.back().key = key;
  }
  const trtwatch::history::EarlierBuilds earlier = trtwatch::history::SelectEarlierBuilds(entries, key, {});
  for (const std::string& path : score) {
    const std::vector<Event> events = ReadEvents(path);
    const double elapsed = Elapsed(events);
    for (double checkpoint : checkpoints) {
      const double now = checkpoint * elapsed;
      trtwatch::history::BuildRecorder live;
      for (const Event& event : events) {
        if (event.t <= now) live.OnEvent(event);
      }
      const trtwatch::Estimate estimate = trtwatch::history::EstimateRemaining(earlier, live.Live(), now);
      const Baselines baselines = BaselinesAt(events, now);
      nlohmann::json row = {{"build", path},
                            {"checkpoint", checkpoint},
                            {"truth", elapsed - now},
                            {"step_fraction", baselines.step_fraction},
                            {"smoothed_rate", baselines.smoothed_rate}};
      if (estimate.remaining) {
        row["p10"] = estimate.remaining->p10;
        row["p50"] = estimate.remaining->p50;
        row["p90"] = estimate.remaining->p90;
      }
      std::printf("%s\n", row.dump().c_str());
    }
  }
  return 0;
}
